import type { StateCreator } from 'zustand';
import type { AppState } from './index.js';
import type { Loadable, Settings } from './types.js';

export interface SettingsSlice {
  settings: Settings | null;
  settingsState: Loadable;
  settingsError: string | null;
  /** Keys saved that apply after a restart. */
  restartRequired: string[];
  setSettings(s: Settings, restartRequired?: string[]): void;
  setSettingsError(message: string | null): void;
}

export const settingsSlice: StateCreator<AppState, [], [], SettingsSlice> = (set) => ({
  settings: null,
  settingsState: 'loading',
  settingsError: null,
  restartRequired: [],
  setSettings: (settings, restartRequired) =>
    set((s) => ({
      settings,
      settingsState: 'ready',
      settingsError: null,
      restartRequired: restartRequired ?? s.restartRequired,
    })),
  setSettingsError: (settingsError) => set((s) => ({ settingsError, settingsState: s.settings ? 'ready' : 'error' })),
});
