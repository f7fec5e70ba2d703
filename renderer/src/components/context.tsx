import { createContext, useContext } from 'react';
import { useStore } from 'zustand';
import type { Actions } from '../store/feed.js';
import type { AppState, AppStore } from '../store/index.js';

export interface AppContextValue {
  store: AppStore;
  actions: Actions;
  /** The clock views count down with (injectable for tests). */
  now: () => number;
}

export const AppContext = createContext<AppContextValue | null>(null);

function useAppContext(): AppContextValue {
  const v = useContext(AppContext);
  if (!v) throw new Error('AppContext is missing');
  return v;
}

/** A narrow subscription: the component re-renders only when what `selector` returns changes. */
export function useApp<T>(selector: (s: AppState) => T): T {
  return useStore(useAppContext().store, selector);
}

export function useActions(): Actions {
  return useAppContext().actions;
}

export function useNow(): () => number {
  return useAppContext().now;
}
