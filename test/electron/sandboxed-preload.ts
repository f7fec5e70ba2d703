/**
 * Runs the built preload (dist/electron/preload.cjs) as a sandboxed renderer runs it: in its own
 * context, where `require` knows only what Electron's sandbox gives a preload ('electron' with
 * contextBridge and ipcRenderer, 'events', 'timers', 'url') and the globals are a web page's plus
 * Buffer and a reduced `process`. A preload that requires a Node module, or reaches for Node
 * globals, fails here as it would in the window.
 */
import { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import * as timers from 'node:timers';
import * as url from 'node:url';
import { createContext, runInContext } from 'node:vm';

export interface RendererIpc {
  invoke(channel: string, payload: unknown): Promise<unknown>;
  on(channel: string, fn: (event: unknown, ...args: unknown[]) => void): unknown;
  removeListener(channel: string, fn: (event: unknown, ...args: unknown[]) => void): unknown;
}

/** Electron's sandbox allows these modules in a preload, and nothing else. */
export const SANDBOX_MODULES = ['electron', 'events', 'timers', 'url'] as const;

export function loadSandboxedPreload(
  file: string,
  ipcRenderer: RendererIpc,
): { exposed: Record<string, unknown>; required: string[] } {
  const exposed: Record<string, unknown> = {};
  const required: string[] = [];
  const electron = {
    contextBridge: {
      exposeInMainWorld(key: string, api: unknown): void {
        // What crosses the context bridge is copied too; functions become proxies (kept here as they are).
        exposed[key] = api;
      },
    },
    ipcRenderer,
  };
  const sandboxRequire = (id: string): unknown => {
    required.push(id);
    if (id === 'electron') return electron;
    if (id === 'events') return EventEmitter;
    if (id === 'timers') return timers;
    if (id === 'url') return url;
    throw new Error(`module not found: ${id} (a sandboxed preload can require only ${SANDBOX_MODULES.join(', ')})`);
  };
  const module = { exports: {} as unknown };
  const context = createContext({
    require: sandboxRequire,
    module,
    exports: module.exports,
    console,
    Buffer,
    process: {
      platform: process.platform,
      versions: { ...process.versions },
      env: {},
      type: 'renderer',
      sandboxed: true,
      contextIsolated: true,
    },
    setTimeout,
    clearTimeout,
    setInterval,
    clearInterval,
    setImmediate,
    clearImmediate,
    queueMicrotask,
    structuredClone,
    TextEncoder,
    TextDecoder,
    URL,
    URLSearchParams,
    AbortController,
    AbortSignal,
  });
  runInContext(readFileSync(file, 'utf8'), context, { filename: file });
  return { exposed, required };
}
