import { useEffect, useMemo, useRef } from 'react';
import { useTranslation } from 'react-i18next';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { useShallow } from 'zustand/react/shallow';
import { useApp } from '../components/context.js';
import { formatMs } from '../format.js';
import { LATENCY_WINDOW_MS } from '../store/latency-slice.js';
import { nodeIndex } from '../store/nodes-slice.js';
import type { LatencySample } from '../store/types.js';

const COLORS = ['#2f7de1', '#e0702f', '#2faa6a', '#a64fd1', '#c9a21a'];

/** Active, standby and recently used nodes, at most five. */
function useChartNodes(): string[] {
  return useApp(
    useShallow((s) => {
      const ids = [
        s.status?.active?.nodeId,
        ...(s.status?.standby ?? []).map((x) => x.nodeId),
        ...s.recentNodes,
      ].filter((x): x is string => !!x);
      const withData = ids.length > 0 ? ids : Object.keys(s.latency);
      return [...new Set(withData)].slice(0, 5);
    }),
  );
}

/** uPlot's aligned table: x in seconds, then per node a URL-test series and a probe series. */
export function chartData(nodeIds: string[], latency: Record<string, LatencySample[]>): uPlot.AlignedData {
  const tables: uPlot.AlignedData[] = [];
  for (const id of nodeIds) {
    const s = latency[id] ?? [];
    for (const kind of ['url', 'tcp'] as const) {
      const pts = s.filter((p) => (kind === 'url' ? p.kind === 'url' : p.kind !== 'url') && p.ms !== null);
      tables.push([pts.map((p) => p.at / 1000), pts.map((p) => p.ms)] as unknown as uPlot.AlignedData);
    }
  }
  if (tables.every((t) => t[0].length === 0)) return [[]];
  return uPlot.join(tables);
}

export function Latency() {
  const { t, i18n } = useTranslation();
  const nodeIds = useChartNodes();
  const latency = useApp((s) => s.latency);
  // Only the charted nodes' hosts: a selector over every node would run on each store update.
  const hosts = useApp(useShallow((s) => nodeIds.map((id) => nodeIndex(s.nodes).get(id)?.host ?? id)));
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const data = useMemo(() => chartData(nodeIds, latency), [nodeIds, latency]);
  const empty = data[0].length === 0;
  const key = nodeIds.join(',') + '|' + hosts.join(',');

  // One chart per set of series; new samples only call setData (cheap at 1 Hz per series).
  useEffect(() => {
    const el = box.current;
    if (!el || empty) return;
    const clock = (secs: number) =>
      new Date(secs * 1000).toLocaleTimeString(i18n.language, { hour: '2-digit', minute: '2-digit' });
    const series: uPlot.Series[] = [
      {
        label: t('latency.time'),
        value: (_u, v) => (v === null ? '–' : new Date(v * 1000).toLocaleTimeString(i18n.language)),
      },
    ];
    nodeIds.forEach((id, i) => {
      const stroke = COLORS[i % COLORS.length]!;
      series.push({
        label: t('latency.seriesUrl', { host: hosts[i] ?? id }),
        stroke,
        width: 2,
        spanGaps: true,
        points: { show: true, size: 7, fill: stroke },
        value: (_u, v) => (v === null ? '–' : formatMs(v, t)),
      });
      series.push({
        label: t('latency.seriesProbe', { host: hosts[i] ?? id }),
        stroke,
        width: 0,
        points: { show: true, size: 7, fill: 'transparent' },
        paths: () => null,
        value: (_u, v) => (v === null ? '–' : formatMs(v, t)),
      });
    });
    const u = new uPlot(
      {
        width: Math.max(300, el.clientWidth),
        height: 320,
        series,
        // Always the whole window, so the axis reads in minutes and new points enter at the right.
        scales: {
          x: { time: true, range: () => [Date.now() / 1000 - LATENCY_WINDOW_MS / 1000, Date.now() / 1000] },
          y: { range: (_u, _min, max) => [0, Math.max(50, Math.ceil((max * 1.15) / 10) * 10)] },
        },
        axes: [
          { stroke: 'currentColor', grid: { stroke: 'rgba(128,128,128,0.2)' }, values: (_u, vals) => vals.map(clock) },
          // Whole milliseconds on the axis (the legend keeps the decimals of small values).
          {
            stroke: 'currentColor',
            grid: { stroke: 'rgba(128,128,128,0.2)' },
            values: (_u, vals) => vals.map((v) => t('format.ms', { value: Math.round(v) })),
            size: 80,
          },
        ],
        cursor: { focus: { prox: 30 } },
        legend: { live: true },
      },
      data,
      el,
    );
    plot.current = u;
    const ro = new ResizeObserver(() => u.setSize({ width: Math.max(300, el.clientWidth), height: 320 }));
    ro.observe(el);
    return () => {
      ro.disconnect();
      u.destroy();
      plot.current = null;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps -- data is pushed below without a rebuild
  }, [key, empty, t, i18n.language]);

  useEffect(() => {
    plot.current?.setData(data);
  }, [data]);

  return (
    <section aria-labelledby="latency-h" className="view">
      <h2 id="latency-h">{t('latency.title')}</h2>
      {empty ? <p className="muted">{t('latency.empty')}</p> : <p className="muted">{t('latency.legend')}</p>}
      <div ref={box} className="chart" role="img" aria-label={t('latency.chart')} data-points={data[0].length} />
    </section>
  );
}
