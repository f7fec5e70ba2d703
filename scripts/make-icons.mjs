// Renders assets/*.svg into the PNG and ICO files the app and the packages use (run by hand:
// `npm run icons`; the outputs are committed). Uses Debian's Chromium through playwright-core,
// the same browser the UI tests use, so no image library is needed.
//   assets/icon.png (512), assets/icon.ico (16–256), assets/icons/NxN.png (Linux packages)
//   assets/tray/tray-<state>-32.png (+@2x)            Linux, colour
//   assets/tray/tray-<state>Template.png (+@2x, 16 pt) macOS, black + alpha (the OS tints it)
//   assets/tray/tray-<state>-light.ico / -dark.ico    Windows light / dark taskbar (16, 32, 48)
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { chromium } from 'playwright-core';

const STATES = {
  connected: { color: '#2faa6a', badge: (c) => `<circle cx="25" cy="25" r="6" fill="${c}"/>` },
  switching: {
    color: '#e0a21a',
    badge: (c) =>
      `<path d="M19 25a6 6 0 0 1 10.5-4M31 25a6 6 0 0 1-10.5 4" stroke="${c}" stroke-width="2.6" fill="none"/>`,
  },
  'no-node': {
    color: '#8a929e',
    badge: (c) => `<circle cx="25" cy="25" r="5" stroke="${c}" stroke-width="2.4" fill="none"/>`,
  },
  error: {
    color: '#d64545',
    badge: (c) => `<path d="M21 21l8 8M29 21l-8 8" stroke="${c}" stroke-width="3" stroke-linecap="round"/>`,
  },
};
const trayTemplate = readFileSync('assets/tray.svg', 'utf8').replace(/<!--[\s\S]*?-->\s*/, '');
const tray = (glyph, badge) => trayTemplate.replace('GLYPH', glyph).replace('BADGE', badge);

const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
});
async function png(svg, size) {
  const page = await browser.newPage({ viewport: { width: size, height: size }, deviceScaleFactor: 1 });
  await page.setContent(
    `<html><body style="margin:0;background:transparent">${svg.replace('<svg ', `<svg width="${size}" height="${size}" `)}</body></html>`,
  );
  const buf = await page.screenshot({ omitBackground: true, clip: { x: 0, y: 0, width: size, height: size } });
  await page.close();
  return buf;
}
/** An ICO holding PNG images (Windows Vista and later read PNG-compressed entries). */
function ico(images) {
  const header = Buffer.alloc(6 + 16 * images.length);
  header.writeUInt16LE(0, 0);
  header.writeUInt16LE(1, 2);
  header.writeUInt16LE(images.length, 4);
  let offset = header.length;
  images.forEach(({ size, data }, i) => {
    const e = 6 + 16 * i;
    header.writeUInt8(size >= 256 ? 0 : size, e);
    header.writeUInt8(size >= 256 ? 0 : size, e + 1);
    header.writeUInt16LE(1, e + 4); // planes
    header.writeUInt16LE(32, e + 6); // bits per pixel
    header.writeUInt32LE(data.length, e + 8);
    header.writeUInt32LE(offset, e + 12);
    offset += data.length;
  });
  return Buffer.concat([header, ...images.map((i) => i.data)]);
}

mkdirSync('assets/tray', { recursive: true });
mkdirSync('assets/icons', { recursive: true });
const app = readFileSync('assets/icon.svg', 'utf8');
writeFileSync('assets/icon.png', await png(app, 512));
writeFileSync(
  'assets/icon.ico',
  ico(await Promise.all([16, 32, 48, 256].map(async (size) => ({ size, data: await png(app, size) })))),
);
for (const size of [16, 32, 48, 64, 128, 256, 512])
  writeFileSync(`assets/icons/${size}x${size}.png`, await png(app, size));
for (const [state, { color, badge }] of Object.entries(STATES)) {
  const colour = tray('#1f6feb', badge(color));
  writeFileSync(`assets/tray/tray-${state}-32.png`, await png(colour, 32));
  writeFileSync(`assets/tray/tray-${state}-32@2x.png`, await png(colour, 64));
  const mono = tray('#000000', badge('#000000'));
  writeFileSync(`assets/tray/tray-${state}Template.png`, await png(mono, 16));
  writeFileSync(`assets/tray/tray-${state}Template@2x.png`, await png(mono, 32));
  for (const [variant, glyph] of [
    ['light', '#1b1f24'],
    ['dark', '#ffffff'],
  ]) {
    const svg = tray(glyph, badge(color));
    writeFileSync(
      `assets/tray/tray-${state}-${variant}.ico`,
      ico(await Promise.all([16, 32, 48].map(async (size) => ({ size, data: await png(svg, size) })))),
    );
  }
}
await browser.close();
console.log('icons written to assets/');
