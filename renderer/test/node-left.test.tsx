// @vitest-environment happy-dom
/**
 * A node automatic selection left for how it failed says so in its row (#60): when, why, and until
 * when it is kept away, in the user's language; a node merely backing off says that instead.
 */
import { cleanup, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { createAppStore } from '../src/store/index.js';
import { Nodes } from '../src/views/Nodes.js';
import { node } from './fakes.js';
import { mount } from './mount.js';
import { formatClock } from '../src/format.js';

afterEach(cleanup);

describe('why a node was left, in the Nodes view (#60)', () => {
  const at = Date.now() - 120_000;
  const until = at + 30 * 60_000;
  const left = node(1, { state: 'candidate', left: { shape: 'dns', at, until } });
  const backingOff = node(2, { state: 'backoff', backoffUntil: until, left: null });

  it('says when it was left, that names failed through it, and until when it is kept away', () => {
    const store = createAppStore();
    store.getState().setNodes({ nodes: [left, backingOff], fetchedAt: 1, source: 'x', via: 'direct' });
    mount(<Nodes />, store);
    expect(screen.getByTestId('state-node-1').textContent).toBe(
      `left at ${formatClock(at, 'en')}: names failed through it; kept away until ${formatClock(until, 'en')}`,
    );
    expect(screen.getByTestId('state-node-2').textContent).toBe(`backing off until ${formatClock(until, 'en')}`);
  });

  it('a node whose tunnel kept dropping says so', () => {
    const store = createAppStore();
    const flapping = node(3, { state: 'candidate', left: { shape: 'flapping', at, until } });
    store.getState().setNodes({ nodes: [flapping], fetchedAt: 1, source: 'x', via: 'direct' });
    mount(<Nodes />, store);
    expect(screen.getByTestId('state-node-3').textContent).toMatch(/: its tunnel kept dropping; kept away until /);
  });

  it('a node left for a crawl says downloads crawled through it, in English and Persian', () => {
    const slow = node(4, { state: 'candidate', left: { shape: 'slow', at, until } });
    for (const [lang, re] of [
      ['en', /: downloads crawled through it; kept away until /],
      ['fa', /کنار گذاشته شد: دانلودها از راه آن بسیار کند بودند/],
    ] as const) {
      const store = createAppStore();
      store.getState().setNodes({ nodes: [slow], fetchedAt: 1, source: 'x', via: 'direct' });
      mount(<Nodes />, store, {}, lang);
      expect(screen.getByTestId('state-node-4').textContent).toMatch(re);
      cleanup();
    }
  });

  it('in Persian and Chinese', () => {
    for (const [lang, re] of [
      ['fa', /کنار گذاشته شد: نام‌ها از راه آن پیدا نمی‌شدند/],
      ['zh-CN', /已离开：经它的域名解析失败/],
    ] as const) {
      const store = createAppStore();
      store.getState().setNodes({ nodes: [left], fetchedAt: 1, source: 'x', via: 'direct' });
      mount(<Nodes />, store, {}, lang);
      expect(screen.getByTestId('state-node-1').textContent).toMatch(re);
      cleanup();
    }
  });
});
