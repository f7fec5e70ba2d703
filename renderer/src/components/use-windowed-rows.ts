import { useCallback, useEffect, useLayoutEffect, useRef, useState, type RefObject } from 'react';

export interface WindowedRows {
  /** The scrolling box. */
  ref: RefObject<HTMLDivElement | null>;
  /** The rows to render: [start, end). */
  start: number;
  end: number;
  /** Space above and below the rendered rows, so the scrollbar stands for every row. */
  padTop: number;
  padBottom: number;
  onScroll: () => void;
  /** Call with a rendered row's height (the first one is measured; rows are one line each). */
  measure: (el: HTMLElement | null) => void;
}

/**
 * Only the rows in view (plus `overscan` either side) of a long list of same-height rows: a
 * thousand nodes cost as much to render as the forty on screen. Before the box has a layout (the
 * first render, a test's DOM) it assumes the window's height.
 */
export function useWindowedRows(count: number, opts: { rowHeight?: number; overscan?: number } = {}): WindowedRows {
  const ref = useRef<HTMLDivElement | null>(null);
  const [rowHeight, setRowHeight] = useState(opts.rowHeight ?? 33);
  const [view, setView] = useState({ top: 0, height: typeof window === 'undefined' ? 800 : window.innerHeight || 800 });
  const frame = useRef<number | null>(null);
  const overscan = opts.overscan ?? 12;

  const read = useCallback(() => {
    const el = ref.current;
    if (!el) return;
    const next = { top: el.scrollTop, height: el.clientHeight || window.innerHeight || 800 };
    setView((v) => (v.top === next.top && v.height === next.height ? v : next));
  }, []);

  const onScroll = useCallback(() => {
    if (frame.current !== null) return;
    frame.current = requestAnimationFrame(() => {
      frame.current = null;
      read();
    });
  }, [read]);

  useLayoutEffect(read, [read]);
  useEffect(() => {
    const el = ref.current;
    if (!el || typeof ResizeObserver === 'undefined') return;
    const ro = new ResizeObserver(read);
    ro.observe(el);
    return () => {
      ro.disconnect();
      if (frame.current !== null) cancelAnimationFrame(frame.current);
    };
  }, [read]);

  const measure = useCallback(
    (el: HTMLElement | null) => {
      const h = el?.getBoundingClientRect().height ?? 0;
      if (h > 0 && Math.abs(h - rowHeight) > 0.5) setRowHeight(h);
    },
    [rowHeight],
  );

  const first = Math.max(0, Math.floor(view.top / rowHeight) - overscan);
  const visible = Math.ceil(view.height / rowHeight) + 2 * overscan;
  const start = Math.min(first, Math.max(0, count - visible));
  const end = Math.min(count, start + visible);
  return { ref, start, end, padTop: start * rowHeight, padBottom: (count - end) * rowHeight, onScroll, measure };
}
