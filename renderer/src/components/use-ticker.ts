import { useEffect, useState } from 'react';

/** Re-renders the caller every `ms` (countdowns, "3 min ago"); the interval is owned and cleared. */
export function useTicker(ms: number, now: () => number): number {
  const [t, setT] = useState(now);
  useEffect(() => {
    const id = setInterval(() => setT(now()), ms);
    return () => clearInterval(id);
  }, [ms, now]);
  return t;
}
