import { useCallback, useState } from 'react';

/**
 * A card's one action at a time: `run(work)` marks it busy (its buttons are disabled), does the
 * work, reads the card's data again with `reload`, and is not busy any more, whatever happened.
 */
export function useBusy(reload: () => Promise<unknown>): {
  busy: boolean;
  run: (work: () => Promise<unknown>) => Promise<void>;
} {
  const [busy, setBusy] = useState(false);
  const run = useCallback(
    async (work: () => Promise<unknown>): Promise<void> => {
      setBusy(true);
      try {
        await work();
        await reload();
      } finally {
        setBusy(false);
      }
    },
    [reload],
  );
  return { busy, run };
}
