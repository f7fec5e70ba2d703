import { useEffect, useMemo, useRef } from 'react';
import { useTranslation } from 'react-i18next';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { TrafficSummaryView } from '../../../core/api/contract.js';
import { formatBytes } from '../format.js';

type Day = TrafficSummaryView['days'][number];

/** uPlot's table: each day's noon (seconds), then bytes through nodes, then direct. */
export function dayData(days: readonly Day[]): uPlot.AlignedData {
  return [
    days.map((d) => Date.parse(`${d.day}T12:00:00`) / 1000),
    days.map((d) => d.tunnel),
    days.map((d) => d.direct),
  ];
}

/** Bytes per day as bars, through nodes and direct side by side (the latency chart's library). */
export function TrafficDays({ days }: { days: readonly Day[] }) {
  const { t, i18n } = useTranslation();
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const data = useMemo(() => dayData(days), [days]);

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const date = (secs: number) =>
      new Date(secs * 1000).toLocaleDateString(i18n.language, { month: 'short', day: 'numeric' });
    const bars = uPlot.paths.bars!({ size: [0.4, 40], align: 0 });
    const u = new uPlot(
      {
        width: Math.max(300, el.clientWidth),
        height: 180,
        series: [
          { label: t('traffic.day'), value: (_u, v) => (v === null ? '–' : date(v)) },
          {
            label: t('traffic.viaNodes'),
            stroke: '#2f7de1',
            fill: 'rgba(47,125,225,0.6)',
            paths: bars,
            points: { show: false },
            value: (_u, v) => formatBytes(v ?? 0),
          },
          {
            label: t('traffic.direct'),
            stroke: '#e0702f',
            fill: 'rgba(224,112,47,0.6)',
            paths: bars,
            points: { show: false },
            value: (_u, v) => formatBytes(v ?? 0),
          },
        ],
        scales: {
          x: { time: true, range: (_u, min, max) => [min - 43_200, max + 43_200] },
          y: { range: (_u, _min, max) => [0, Math.max(1024, max * 1.15)] },
        },
        axes: [
          {
            stroke: 'currentColor',
            grid: { show: false },
            // Labels under the bars (each day's noon), at most about eight, always today's.
            splits: (u) => {
              const xs = (u.data[0] ?? []) as number[];
              const every = Math.max(1, Math.ceil(xs.length / 8));
              return xs.filter((_x, i) => (xs.length - 1 - i) % every === 0);
            },
            values: (_u, vals) => vals.map(date),
          },
          {
            stroke: 'currentColor',
            grid: { stroke: 'rgba(128,128,128,0.2)' },
            values: (_u, vals) => vals.map((v) => formatBytes(v)),
            size: 90,
          },
        ],
        legend: { live: true },
      },
      data,
      el,
    );
    plot.current = u;
    const ro = new ResizeObserver(() => u.setSize({ width: Math.max(300, el.clientWidth), height: 180 }));
    ro.observe(el);
    return () => {
      ro.disconnect();
      u.destroy();
      plot.current = null;
    };
    // A new chart only when the language changes; data goes in below.
    // eslint-disable-next-line react-hooks/exhaustive-deps -- data is fed by setData, not by a new chart
  }, [i18n.language, t]);

  useEffect(() => {
    plot.current?.setData(data);
  }, [data]);

  return (
    <div
      ref={box}
      className="chart"
      role="img"
      data-days={days.length}
      aria-label={t('traffic.chartLabel', { days: days.length })}
    />
  );
}
