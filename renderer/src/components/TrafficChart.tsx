import { useEffect, useMemo, useRef } from 'react';
import { useTranslation } from 'react-i18next';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { formatRate } from '../format.js';
import { TRAFFIC_WINDOW_MS } from '../store/egress-slice.js';
import type { TrafficPoint } from '../store/state.js';
import { useApp } from './context.js';

/** uPlot's table: seconds, then bytes/s up and down. */
export function trafficData(points: readonly TrafficPoint[]): uPlot.AlignedData {
  return [points.map((p) => p.at / 1000), points.map((p) => p.up), points.map((p) => p.down)];
}

/** Throughput, up and down, over the last minutes (from the status feed). */
export function TrafficChart() {
  const { t, i18n } = useTranslation();
  const points = useApp((s) => s.traffic);
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const data = useMemo(() => trafficData(points), [points]);
  const ready = points.length >= 2;

  useEffect(() => {
    const el = box.current;
    if (!el || !ready) return;
    const clock = (secs: number) =>
      new Date(secs * 1000).toLocaleTimeString(i18n.language, { hour: '2-digit', minute: '2-digit' });
    const u = new uPlot(
      {
        width: Math.max(300, el.clientWidth),
        height: 160,
        series: [
          {
            label: t('latency.time'),
            value: (_u, v) => (v === null ? '–' : new Date(v * 1000).toLocaleTimeString(i18n.language)),
          },
          { label: t('overview.upRate'), stroke: '#e0702f', width: 2, value: (_u, v) => formatRate(v) },
          { label: t('overview.downRate'), stroke: '#2f7de1', width: 2, value: (_u, v) => formatRate(v) },
        ],
        scales: {
          x: { time: true, range: () => [Date.now() / 1000 - TRAFFIC_WINDOW_MS / 1000, Date.now() / 1000] },
          y: { range: (_u, _min, max) => [0, Math.max(1024, max * 1.15)] },
        },
        axes: [
          { stroke: 'currentColor', grid: { stroke: 'rgba(128,128,128,0.2)' }, values: (_u, vals) => vals.map(clock) },
          {
            stroke: 'currentColor',
            grid: { stroke: 'rgba(128,128,128,0.2)' },
            values: (_u, vals) => vals.map((v) => formatRate(v)),
            size: 90,
          },
        ],
        legend: { live: true },
      },
      data,
      el,
    );
    plot.current = u;
    const ro = new ResizeObserver(() => u.setSize({ width: Math.max(300, el.clientWidth), height: 160 }));
    ro.observe(el);
    return () => {
      ro.disconnect();
      u.destroy();
      plot.current = null;
    };
    // A new chart only when the language changes; data goes in below (the effect after this one).
    // eslint-disable-next-line react-hooks/exhaustive-deps -- data is fed by setData, not by a new chart
  }, [ready, i18n.language, t]);

  useEffect(() => {
    plot.current?.setData(data);
  }, [data]);

  return (
    <article className="card wide" aria-labelledby="traffic-h">
      <h3 id="traffic-h">{t('overview.traffic')}</h3>
      {ready ? (
        <div
          ref={box}
          className="chart"
          role="img"
          data-points={points.length}
          aria-label={t('overview.trafficChart', { minutes: TRAFFIC_WINDOW_MS / 60_000 })}
        />
      ) : (
        <p className="muted">{t('overview.trafficWaiting')}</p>
      )}
    </article>
  );
}
