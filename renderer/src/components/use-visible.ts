import { useSyncExternalStore } from 'react';

const subscribe = (fn: () => void): (() => void) => {
  document.addEventListener('visibilitychange', fn);
  return () => document.removeEventListener('visibilitychange', fn);
};
const visible = (): boolean => document.visibilityState !== 'hidden';

/** Whether the page is shown: a hidden window (closed to the tray, a background tab) renders nothing. */
export function useDocumentVisible(): boolean {
  return useSyncExternalStore(subscribe, visible, () => true);
}
