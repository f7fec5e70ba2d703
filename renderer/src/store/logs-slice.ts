import type { StateCreator } from 'zustand';
import type { AppState, LogsSlice, LogEntry } from './state.js';

export const MAX_LOG_LINES = 500;

export const logsSlice: StateCreator<AppState, [], [], LogsSlice> = (set) => ({
  logs: [],
  logSeq: 0,
  logLevel: 'info',
  addLog: (l) =>
    set((s) => {
      // The event stream opens with the recent log (again after each reconnect): a line older than
      // the newest one shown, or the same line at the same time, is one the view already has.
      const last = s.logs.at(-1);
      if (
        last &&
        (l.time < last.time || (l.time === last.time && s.logs.some((x) => x.time === l.time && x.msg === l.msg)))
      )
        return s;
      const entry: LogEntry = { ...l, seq: s.logSeq };
      return {
        logSeq: s.logSeq + 1,
        logs:
          s.logs.length >= MAX_LOG_LINES
            ? [...s.logs.slice(s.logs.length - MAX_LOG_LINES + 1), entry]
            : [...s.logs, entry],
      };
    }),
  setLogLevel: (logLevel) => set({ logLevel }),
});
