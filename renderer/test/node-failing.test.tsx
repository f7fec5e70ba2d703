// @vitest-environment happy-dom
/**
 * The window says how the node in use fails, while it fails (#60): names, connections, silence, a
 * stall, in the user's language, and that Gatehop leaves it if this goes on. Nothing while the
 * health windows are good, and nothing from an older core that sends no symptoms.
 */
import { cleanup, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { createAppStore } from '../src/store/index.js';
import { Overview } from '../src/views/Overview.js';
import { status } from './fakes.js';
import { mount } from './mount.js';

afterEach(cleanup);

type Symptom = 'link' | 'dns' | 'dns-slow' | 'connects' | 'stall' | 'retransmit';

function storeWith(symptoms: Symptom[] | undefined, consecutiveBad: number) {
  const store = createAppStore();
  const st = status();
  store.getState().setStatus({
    ...st,
    health: { windows: 9, badWindows: 3, score: 0.4, reasons: [], consecutiveBad, ...(symptoms ? { symptoms } : {}) },
  });
  return store;
}

describe('the node in use half-dies (#60)', () => {
  it('says which shape, while the windows are bad', () => {
    mount(<Overview />, storeWith(['dns'], 2));
    expect(screen.getByTestId('node-failing').textContent).toBe(
      '⚠ names fail through n1; Gatehop leaves it if this goes on',
    );
    cleanup();
    mount(<Overview />, storeWith(['connects'], 1));
    expect(screen.getByTestId('node-failing').textContent).toMatch(/^⚠ connections fail through n1/);
  });

  it('says nothing while the windows are good, nor for an older core without symptoms', () => {
    mount(<Overview />, storeWith(['dns'], 0));
    expect(screen.queryByTestId('node-failing')).toBeNull();
    cleanup();
    mount(<Overview />, storeWith(undefined, 0));
    expect(screen.queryByTestId('node-failing')).toBeNull();
  });

  it('in Chinese and Persian', () => {
    mount(<Overview />, storeWith(['dns'], 2), {}, 'zh-CN');
    expect(screen.getByTestId('node-failing').textContent).toBe('⚠ 经 n1 的域名解析失败；若持续将切换节点');
    cleanup();
    mount(<Overview />, storeWith(['link'], 3), {}, 'fa');
    expect(screen.getByTestId('node-failing').textContent).toMatch(/n1 پاسخ نمی‌دهد/);
  });
});

describe('after Gatehop left a failing node (#60)', () => {
  const at = Date.now() - 60_000;
  function movedStore(leftFor: 'dns' | 'connects' | undefined) {
    const store = createAppStore();
    const st = status();
    store.getState().setStatus({
      ...st,
      switches: {
        ...st.switches,
        last: {
          id: 3,
          at,
          kind: 'auto',
          reason: 'r',
          from: 'n9',
          to: 'n1',
          outcome: 'switched',
          durationMs: 700,
          ...(leftFor ? { leftFor } : {}),
        },
      },
    });
    return store;
  }

  it('says when it moved, where to, and why; nothing for a switch that did not leave a failing node', () => {
    mount(<Overview />, movedStore('dns'));
    expect(screen.getByTestId('node-moved').textContent).toMatch(/^Moved to n1 at .+: names failed through n9$/);
    cleanup();
    mount(<Overview />, movedStore(undefined));
    expect(screen.queryByTestId('node-moved')).toBeNull();
    cleanup();
    mount(<Overview />, movedStore('connects'), {}, 'fa');
    expect(screen.getByTestId('node-moved').textContent).toMatch(/به n1 رفت: اتصال‌ها از راه n9 برقرار نمی‌شدند/);
  });
});
