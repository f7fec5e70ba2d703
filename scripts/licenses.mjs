// `npm run licenses`: every third-party work a Gatehop build hands to users, with its licence.
//   npm run licenses            a table: package, version, licence, where it ends up
//   npm run licenses -- --write THIRD_PARTY_NOTICES.txt made again (the notices with full texts)
//   npm run licenses -- --check exit 1 when the notices file is stale or a licence is unknown or
//                               not on the list below (test/unit/licenses.test.ts runs this)
// What ships: the core's production dependencies (package-lock.json, dev: false, with everything
// they depend on), the packages the window's bundle takes in (REACT_ROOTS and their dependencies:
// vite copies their code into dist/renderer), and the C compiled into lwip.wasm (licenses/).
// Electron itself ships Chromium's notices as LICENSES.chromium.html beside its binary.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const NOTICES = join(root, 'THIRD_PARTY_NOTICES.txt');
/** The window's own imports (renderer/src): bundled, so distributed, though dev dependencies here. */
const WINDOW_ROOTS = ['react', 'react-dom', 'react-i18next', 'i18next', 'zustand', 'uplot', 'zod'];
/** Licences a binary distribution of Gatehop (Apache-2.0) may carry, with their notices. */
const ALLOWED = new Set([
  'MIT',
  'ISC',
  'BSD-2-Clause',
  'BSD-3-Clause',
  'Apache-2.0',
  'CC0-1.0',
  'CC-BY-4.0',
  '0BSD',
  '(MIT OR WTFPL)',
  '(BSD-2-Clause OR MIT OR Apache-2.0)',
  'SEE LICENSE IN ROUTEVIEWS-LICENSE and DBIP-LICENSE (CC-BY-4.0)',
]);
/** C compiled into core/netstack/lwip/*.wasm (core/netstack/lwip/build.sh). */
const VENDORED = [
  {
    name: 'lwIP',
    version: '2.1.3 (Debian 2.1.3+dfsg1-2)',
    license: 'BSD-3-Clause',
    where: 'lwip.wasm, lwip-gateway.wasm',
    file: 'licenses/lwip.txt',
  },
  {
    name: 'wasi-libc',
    version: 'Debian bookworm',
    license: 'CC0-1.0 AND BSD-2-Clause AND MIT AND Apache-2.0',
    where: 'lwip.wasm, lwip-gateway.wasm',
    file: 'licenses/wasi-libc.txt',
  },
];

const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')).packages;

/** Node's lookup: the nearest node_modules/<name> from `from` up. */
function resolve(from, name) {
  let base = from;
  for (;;) {
    const key = `${base ? `${base}/` : ''}node_modules/${name}`;
    if (lock[key]) return key;
    if (!base) return null;
    const at = base.lastIndexOf('/node_modules/');
    base = at < 0 ? '' : base.slice(0, at);
  }
}

function closure(roots) {
  const seen = new Set();
  const stack = [...roots];
  while (stack.length) {
    const key = stack.pop();
    if (!key || seen.has(key)) continue;
    seen.add(key);
    for (const dep of Object.keys(lock[key].dependencies ?? {})) stack.push(resolve(key, dep));
  }
  return seen;
}

/** Every licence, notice or copying file the package ships (some carry several: data from three sources). */
function licenceText(key) {
  const dir = join(root, key);
  if (!existsSync(dir)) return null;
  const files = readdirSync(dir)
    .filter((f) => /licen[cs]e|copying|notice|modifications/i.test(f))
    .sort();
  if (files.length === 0) return null;
  return files
    .map((f) => (files.length > 1 ? `--- ${f}\n` : '') + readFileSync(join(dir, f), 'utf8').trim())
    .join('\n\n');
}

const MIT = `Permission is hereby granted, free of charge, to any person obtaining a copy of this software and
associated documentation files (the "Software"), to deal in the Software without restriction, including
without limitation the rights to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is furnished to do so, subject to the
following conditions:

The above copyright notice and this permission notice shall be included in all copies or substantial
portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED, INCLUDING BUT NOT
LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO
EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER
IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE
USE OR OTHER DEALINGS IN THE SOFTWARE.`;

/** A package that names MIT but ships no text (sirv, @polka/url): the MIT text under its author's name. */
function statedLicence(key, license) {
  const pkg = JSON.parse(readFileSync(join(root, key, 'package.json'), 'utf8'));
  const author = typeof pkg.author === 'string' ? pkg.author : (pkg.author?.name ?? 'its authors');
  if (license === 'MIT')
    return `MIT License (stated in package.json; no licence file shipped)\n\nCopyright (c) ${author}\n\n${MIT}`;
  return `Licensed under ${license} (the package ships no licence file).`;
}

function packages() {
  const core = new Set(Object.keys(lock).filter((k) => k && !lock[k].dev && !lock[k].optional));
  const window = closure(WINDOW_ROOTS.map((n) => resolve('', n)));
  const all = [...new Set([...core, ...window])].sort();
  return all.map((key) => ({
    key,
    name: key.replace(/^.*node_modules\//, ''),
    version: lock[key].version,
    license: lock[key].license ?? 'UNKNOWN',
    where: [core.has(key) ? 'core' : null, window.has(key) ? 'window' : null].filter(Boolean).join(', '),
  }));
}

function notices(list) {
  const parts = [
    'Gatehop: third-party notices',
    '',
    'Gatehop is licensed under the Apache License 2.0 (LICENSE). It includes the works below, each',
    'under its own licence. Made by `npm run licenses -- --write`; do not edit by hand.',
    'Electron and Chromium: see LICENSE.electron.txt and LICENSES.chromium.html beside the binary.',
    'LLVM compiler-rt builtins in the .wasm files: Apache-2.0 WITH LLVM-exception (no notice required).',
  ];
  for (const v of VENDORED)
    parts.push(
      '',
      '='.repeat(78),
      `${v.name} ${v.version} (${v.license}), in ${v.where}`,
      '',
      readFileSync(join(root, v.file), 'utf8').trim(),
    );
  for (const p of list) {
    const text = licenceText(p.key) ?? statedLicence(p.key, p.license);
    parts.push('', '='.repeat(78), `${p.name} ${p.version} (${p.license}), in the ${p.where}`, '', text);
  }
  return `${parts.join('\n')}\n`;
}

const list = packages();
const mode = process.argv[2] ?? '';
if (mode === '--write') {
  writeFileSync(NOTICES, notices(list));
  process.stdout.write(`licenses: wrote ${NOTICES} (${list.length} packages, ${VENDORED.length} vendored)\n`);
} else if (mode === '--check') {
  const problems = list
    .filter((p) => !ALLOWED.has(p.license))
    .map((p) => `${p.name}: licence ${p.license} is not on the list`);
  if (!existsSync(NOTICES) || readFileSync(NOTICES, 'utf8') !== notices(list))
    problems.push('THIRD_PARTY_NOTICES.txt is not what the lockfile gives: run npm run licenses -- --write');
  for (const p of problems) process.stderr.write(`licenses: ${p}\n`);
  process.exit(problems.length ? 1 : 0);
} else {
  const rows = [
    ...VENDORED.map((v) => [v.name, v.version, v.license, v.where]),
    ...list.map((p) => [p.name, p.version, p.license, p.where]),
  ];
  const w = [0, 1, 2].map((i) => Math.max(...rows.map((r) => r[i].length)));
  for (const r of rows) process.stdout.write(`${r.map((c, i) => (i < 3 ? c.padEnd(w[i]) : c)).join('  ')}\n`);
  process.stdout.write(`${rows.length} works; full texts in THIRD_PARTY_NOTICES.txt\n`);
}
