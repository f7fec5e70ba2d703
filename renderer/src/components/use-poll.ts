import { useEffect } from 'react';
import { detach } from '../detach.js';

/**
 * Reads now and every `ms` while the component is shown (and again from now whenever `read`
 * changes: a new search, another range). The interval is the component's: it goes with it.
 */
export function usePoll(read: () => Promise<unknown>, ms: number): void {
  useEffect(() => {
    detach(read());
    const timer = setInterval(() => detach(read()), ms);
    return () => clearInterval(timer);
  }, [read, ms]);
}
