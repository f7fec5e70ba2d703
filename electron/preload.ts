/**
 * The window's only bridge: `window.gatehop`, one function per operation of the contract plus
 * `subscribe`, generated from the contract's operation names. Nothing else is exposed (no
 * ipcRenderer, no event objects). Bundled into one CommonJS file (scripts/build-electron.mjs),
 * since a sandboxed preload can require only 'electron'.
 */
import { contextBridge, ipcRenderer } from 'electron';
import { opNames } from '../core/api/contract.js';
import { channelOf, EVENT_CHANNEL } from './ipc-channels.js';

const bridge: Record<string, unknown> = Object.fromEntries(
  opNames.map((name) => [name, (input: unknown) => ipcRenderer.invoke(channelOf(name), input ?? {})]),
);
bridge.subscribe = (fn: (event: string, data: unknown) => void): (() => void) => {
  const listener = (_e: unknown, event: string, data: unknown): void => fn(event, data);
  ipcRenderer.on(EVENT_CHANNEL, listener);
  return () => ipcRenderer.removeListener(EVENT_CHANNEL, listener);
};
contextBridge.exposeInMainWorld('gatehop', bridge);
