import type { StateCreator } from 'zustand';
import type { AppState } from './index.js';
import type { LogLine } from './types.js';

export const MAX_LOG_LINES = 500;

export interface LogsSlice {
  logs: LogLine[];
  logLevel: 'debug' | 'info' | 'warn' | 'error';
  addLog(l: LogLine): void;
  setLogLevel(level: LogsSlice['logLevel']): void;
}

export const logsSlice: StateCreator<AppState, [], [], LogsSlice> = (set) => ({
  logs: [],
  logLevel: 'info',
  addLog: (l) => set((s) => ({ logs: s.logs.length >= MAX_LOG_LINES ? [...s.logs.slice(s.logs.length - MAX_LOG_LINES + 1), l] : [...s.logs, l] })),
  setLogLevel: (logLevel) => set({ logLevel }),
});
