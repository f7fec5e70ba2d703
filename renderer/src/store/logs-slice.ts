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
  addLog: (l) =>
    set((s) => {
      // The event stream opens with the recent log (again after each reconnect): a line older than
      // the newest one shown, or the same line at the same time, is one the view already has.
      const last = s.logs.at(-1);
      if (last && (l.time < last.time || (l.time === last.time && s.logs.some((x) => x.time === l.time && x.msg === l.msg)))) return s;
      return { logs: s.logs.length >= MAX_LOG_LINES ? [...s.logs.slice(s.logs.length - MAX_LOG_LINES + 1), l] : [...s.logs, l] };
    }),
  setLogLevel: (logLevel) => set({ logLevel }),
});
