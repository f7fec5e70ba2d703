import { operations, opNames, type Result } from '../core/api/contract.js';
import { failureOf, type OperationImpls } from '../core/api/index.js';
import type { IpcMainApi, IpcMainInvokeEvent, WebContentsApi } from './electron-api.js';

import { channelOf, EVENT_CHANNEL } from './ipc-channels.js';

export { channelOf, EVENT_CHANNEL };

/**
 * One ipcMain handler per operation of the contract. Each validates its payload with the
 * operation's input schema, runs the same implementation the admin API runs, and answers
 * {ok, value} | {ok: false, error: {code, message}} (a thrown error would lose its code across
 * invoke). A call whose sender frame is not the app's own page is refused.
 */
export function registerIpc(
  ipcMain: IpcMainApi,
  impls: OperationImpls,
  isOwnFrame: (e: IpcMainInvokeEvent) => boolean,
): () => void {
  for (const name of opNames) {
    ipcMain.handle(channelOf(name), async (event, payload: unknown): Promise<Result<unknown>> => {
      if (!isOwnFrame(event))
        return {
          ok: false,
          error: { code: 'GH_ERR_IPC_FORBIDDEN', message: 'calls are accepted only from the Gatehop window' },
        };
      const parsed = operations[name].input.safeParse(payload ?? {});
      if (!parsed.success) {
        const i = parsed.error.issues[0]!;
        return {
          ok: false,
          error: {
            code: 'GH_ERR_IPC_BAD_REQUEST',
            message: `${name}${i.path.length ? `.${i.path.join('.')}` : ''}: ${i.message}`,
          },
        };
      }
      try {
        const impl = impls[name] as (input: unknown) => unknown;
        return { ok: true, value: (await impl(parsed.data)) ?? null };
      } catch (err) {
        const f = failureOf(err);
        return { ok: false, error: { code: f.code, message: f.message } };
      }
    });
  }
  return () => {
    for (const name of opNames) ipcMain.removeHandler(channelOf(name));
  };
}

/** Forwards the core's event feed to the window, checking that it still exists (sending to a destroyed one throws). */
export function forwardEvents(
  subscribe: (fn: (event: string, data: unknown) => void) => () => void,
  target: () => WebContentsApi | null,
): () => void {
  return subscribe((event, data) => {
    const wc = target();
    if (wc && !wc.isDestroyed()) wc.send(EVENT_CHANNEL, event, data);
  });
}
