import type { StateCreator } from 'zustand';
import type { AppState, SettingsSlice } from './state.js';

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
