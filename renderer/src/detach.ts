/**
 * A promise started from a click or an event that nobody awaits. Actions report their own failures
 * (a Result whose error the store shows in the banner); what still rejects is a fault in the window
 * itself, written to the console rather than left unhandled.
 */
export function detach(work: Promise<unknown>): void {
  work.catch((err: unknown) => console.error('gatehop window: an action failed', err));
}
