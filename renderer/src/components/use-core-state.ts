import { useCallback, useState } from 'react';
import type { Result } from '../../../core/api/contract.js';
import { useBusy } from './use-busy.js';
import { usePoll } from './use-poll.js';

/**
 * A card's state read from the core now and every `ms` while it is shown (`read` must be stable:
 * an action of the store). A refusal marks the card unavailable (the core offers no such thing
 * here: the card shows nothing); `run` does one action at a time and reads again after it.
 */
export function useCoreState<T>(read: () => Promise<Result<T>>, ms: number) {
  const [state, setState] = useState<T | null>(null);
  const [unavailable, setUnavailable] = useState(false);
  const reload = useCallback(async () => {
    const r = await read();
    if (r.ok) setState(r.value);
    else setUnavailable(true);
  }, [read]);
  usePoll(reload, ms);
  const { busy, run } = useBusy(reload);
  return { state, setState, unavailable, busy, run, reload };
}
