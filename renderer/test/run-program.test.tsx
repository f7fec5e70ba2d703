// @vitest-environment happy-dom
/**
 * "Run a program through Gatehop" on the Overview (#46): where capture works, a command (or a
 * terminal) is started through the core and the programs running so are listed; where it does
 * not, the card says why in the user's language; the protection card names captured programs.
 */
import { act, cleanup, fireEvent, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { createAppStore } from '../src/store/index.js';
import { Protection } from '../src/components/Protection.js';
import { RunProgram } from '../src/components/RunProgram.js';
import type { Actions } from '../src/store/feed.js';
import { status } from './fakes.js';
import { mount } from './mount.js';

afterEach(cleanup);

const capture = (over: Partial<NonNullable<ReturnType<typeof status>['capture']>> = {}) => ({
  available: true,
  reason: null,
  programs: [],
  ...over,
});

describe('run a program through Gatehop (#46)', () => {
  it('starts the command typed, opens a terminal, and lists what runs through Gatehop', async () => {
    const store = createAppStore();
    store.getState().setStatus(status({ capture: capture() }));
    const calls: Array<[string, boolean]> = [];
    const runCaptured: Actions['runCaptured'] = async (command, terminal) => {
      calls.push([command, terminal]);
      return { ok: true, value: { pid: 42, command: command.split(' ').filter(Boolean) } };
    };
    mount(<RunProgram />, store, { runCaptured });
    const run = screen.getByRole('button', { name: 'Run' });
    expect((run as HTMLButtonElement).disabled).toBe(true);
    fireEvent.change(screen.getByLabelText('Program (a command, or a .desktop file)'), {
      target: { value: 'steam -silent' },
    });
    fireEvent.click(run);
    await waitFor(() => expect(screen.getByTestId('run-said').textContent).toBe('Started: steam -silent'));
    fireEvent.click(screen.getByRole('button', { name: 'Open a terminal through Gatehop' }));
    await waitFor(() => expect(screen.getByTestId('run-said').textContent).toMatch(/^A terminal opened/));
    expect(calls).toEqual([
      ['steam -silent', false],
      ['', true],
    ]);
    act(() =>
      store.getState().setStatus(
        status({
          capture: capture({ programs: [{ id: 1, command: 'steam', startedAt: 1, connections: 3, udpFlows: 2 }] }),
        }),
      ),
    );
    expect(screen.getByTestId('run-programs').textContent).toBe('✓ steam (3 connections, 2 UDP flows)');
  });

  it('says what went wrong when the core refuses', async () => {
    const store = createAppStore();
    store.getState().setStatus(status({ capture: capture() }));
    const runCaptured: Actions['runCaptured'] = async () => ({
      ok: false,
      error: { code: 'GH_ERR_CAPTURE_UNAVAILABLE', message: 'no terminal found' },
    });
    mount(<RunProgram />, store, { runCaptured });
    fireEvent.click(screen.getByRole('button', { name: 'Open a terminal through Gatehop' }));
    await waitFor(() =>
      expect(screen.getByTestId('run-said').textContent).toBe('Could not start it: no terminal found'),
    );
  });

  it('where capture cannot work, says why in the user’s language, and the protection card does not promise it', () => {
    const store = createAppStore();
    store.getState().setStatus(status({ capture: capture({ available: false, reason: 'platform' }) }));
    mount(
      <>
        <RunProgram />
        <Protection />
      </>,
      store,
      {},
      'fa',
    );
    expect(screen.getByTestId('run-unavailable').textContent).toMatch(/به لینوکس نیاز دارد/);
    expect(screen.queryByRole('button', { name: 'اجرا' })).toBeNull();
    expect(screen.queryByTestId('protection-captured')).toBeNull();
  });

  it('the protection card counts captured programs as protected where capture works', () => {
    const store = createAppStore();
    store.getState().setStatus(status({ capture: capture() }));
    mount(<Protection />, store);
    expect(screen.getByTestId('protection-captured').textContent).toMatch(/^✓ Programs started with/);
  });
});
