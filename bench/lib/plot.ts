/**
 * A line chart of soak samples as SVG, rendered to PNG by Debian's Chromium (playwright-core):
 * memory over time for bench/README.md, with no plotting dependency.
 */
import { writeFileSync } from 'node:fs';
import { launchChromium } from '../../test/helpers/browser.js';

export interface Series {
  label: string;
  color: string;
  points: Array<[number, number]>;
}

export function lineChartSvg(
  title: string,
  xLabel: string,
  yLabel: string,
  series: Series[],
  width = 900,
  height = 420,
): string {
  const pad = { l: 60, r: 160, t: 40, b: 44 };
  const xs = series.flatMap((s) => s.points.map((p) => p[0]));
  const ys = series.flatMap((s) => s.points.map((p) => p[1]));
  const xMax = Math.max(1, ...xs);
  const yMax = Math.max(1, ...ys) * 1.1;
  const X = (x: number) => pad.l + (x / xMax) * (width - pad.l - pad.r);
  const Y = (y: number) => height - pad.b - (y / yMax) * (height - pad.t - pad.b);
  const ticks = (max: number, n: number) => Array.from({ length: n + 1 }, (_, i) => (max * i) / n);
  const grid = ticks(yMax, 5)
    .map(
      (y) =>
        `<line x1="${pad.l}" x2="${width - pad.r}" y1="${Y(y)}" y2="${Y(y)}" stroke="#ddd"/><text x="${pad.l - 6}" y="${Y(y) + 4}" text-anchor="end">${y.toFixed(0)}</text>`,
    )
    .join('');
  const xt = ticks(xMax, 6)
    .map((x) => `<text x="${X(x)}" y="${height - pad.b + 16}" text-anchor="middle">${x.toFixed(0)}</text>`)
    .join('');
  const lines = series
    .map((s, i) => {
      const d = s.points.map((p) => `${X(p[0]).toFixed(1)},${Y(p[1]).toFixed(1)}`).join(' ');
      return `<polyline fill="none" stroke="${s.color}" stroke-width="2" points="${d}"/><rect x="${width - pad.r + 12}" y="${pad.t + i * 20}" width="12" height="12" fill="${s.color}"/><text x="${width - pad.r + 30}" y="${pad.t + i * 20 + 11}">${s.label}</text>`;
    })
    .join('');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="12"><rect width="100%" height="100%" fill="#fff"/><text x="${pad.l}" y="22" font-size="15" font-weight="bold">${title}</text>${grid}${xt}<text x="${(pad.l + width - pad.r) / 2}" y="${height - 8}" text-anchor="middle">${xLabel}</text><text transform="translate(14 ${height / 2}) rotate(-90)" text-anchor="middle">${yLabel}</text>${lines}</svg>`;
}

export async function writePng(svg: string, file: string): Promise<void> {
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width: 900, height: 420 } });
    await page.setContent(`<body style="margin:0">${svg}</body>`);
    await page.screenshot({ path: file, clip: { x: 0, y: 0, width: 900, height: 420 } });
  } finally {
    await browser.close();
  }
  writeFileSync(`${file}.svg`, svg);
}
