import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(__dirname, '../..');
const DEPCRUISE = join(ROOT, 'node_modules/.bin/depcruise');

/** Lays out a miniature core/ with the given files and runs the project's layering rules on it. */
function cruise(files: Record<string, string>): Promise<{ code: number; out: string }> {
  return cruiseWith(['core'], files);
}

function cruiseWith(roots: string[], files: Record<string, string>): Promise<{ code: number; out: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'gh-layers-'));
  copyFileSync(join(ROOT, '.dependency-cruiser.cjs'), join(dir, '.dependency-cruiser.cjs'));
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true } }),
  );
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return new Promise((res) => {
    execFile(DEPCRUISE, ['--config', '.dependency-cruiser.cjs', ...roots], { cwd: dir }, (err, stdout, stderr) => {
      res({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, out: stdout + stderr });
    });
  });
}

const egress = {
  'core/egress/index.ts': "export { DirectEgress } from './direct.js';\n",
  'core/egress/direct.ts':
    "import type { Egress } from '../contracts/index.js';\nexport class DirectEgress { e?: Egress }\n",
  'core/contracts/index.ts': "export type { Egress } from './egress.js';\n",
  'core/contracts/egress.ts': 'export interface Egress { id: string }\n',
};

describe('layering lint', () => {
  it('passes the proxy naming an Egress through contracts', async () => {
    const r = await cruise({
      ...egress,
      'core/proxy/s.ts': "import type { Egress } from '../contracts/index.js';\nexport type E = Egress;\n",
    });
    expect(r.out).toMatch(/no dependency violations/);
    expect(r.code).toBe(0);
  });

  it('fails the proxy importing egress at all, even for a type', async () => {
    const r = await cruise({
      ...egress,
      'core/proxy/s.ts':
        "import { DirectEgress } from '../egress/index.js';\nimport type {} from '../egress/index.js';\nexport const d = DirectEgress;\n",
    });
    expect(r.code).not.toBe(0);
    expect(r.out).toMatch(/proxy-sees-only-interfaces/);
  });

  it('fails contracts importing anything of core, and router or egress knowing the other', async () => {
    const r = await cruise({
      ...egress,
      'core/common/index.ts': 'export const c = 1;\n',
      'core/contracts/x.ts': "import { c } from '../common/index.js';\nexport type X = typeof c;\n",
      'core/router/index.ts': "import { DirectEgress } from '../egress/index.js';\nexport const r = DirectEgress;\n",
    });
    expect(r.code).not.toBe(0);
    expect(r.out).toMatch(/contracts-are-interfaces/);
    expect(r.out).toMatch(/router-knows-rules-not-egresses/);
  });

  it('fails a deep import past a module index and an upward import from common', async () => {
    const r = await cruise({
      ...egress,
      'core/app/a.ts': "import { DirectEgress } from '../egress/direct.js';\nexport const d = DirectEgress;\n",
      'core/common/c.ts': "import type { Egress } from '../contracts/index.js';\nexport type E = Egress;\n",
    });
    expect(r.out).toMatch(/index-only/);
    expect(r.out).toMatch(/common-is-the-floor/);
  });

  it('honesty checks a node through the Egress interface alone: an egress implementation or the switching is refused (#43)', async () => {
    const ok = await cruise({
      ...egress,
      'core/honesty/index.ts': "import type { Egress } from '../contracts/index.js';\nexport type T = Egress;\n",
    });
    expect(ok.code).toBe(0);
    const bad = await cruise({
      ...egress,
      'core/groups/index.ts': 'export const g = 1;\n',
      'core/honesty/index.ts':
        "import { DirectEgress } from '../egress/index.js';\nimport { g } from '../groups/index.js';\nexport const h = [DirectEgress, g];\n",
    });
    expect(bad.code).not.toBe(0);
    expect(bad.out).toMatch(/honesty-checks-through-the-egress/);
  });

  it('lets the LAN share open a proxy listener but not reach the store or an egress itself (#63)', async () => {
    const ok = await cruise({
      'core/proxy/index.ts': 'export class ProxyServer {}\n',
      'core/share/index.ts': "import type { ProxyServer } from '../proxy/index.js';\nexport type S = ProxyServer;\n",
    });
    expect(ok.code).toBe(0);
    const bad = await cruise({
      ...egress,
      'core/store/index.ts': 'export const s = 1;\n',
      'core/share/index.ts':
        "import { s } from '../store/index.js';\nimport { DirectEgress } from '../egress/index.js';\nexport const x = [s, DirectEgress];\n",
    });
    expect(bad.code).not.toBe(0);
    expect(bad.out).toMatch(/share-is-a-listener-of-the-proxy/);
  });

  it('lets the traffic ledger keep rows in the store but never see a session of the proxy (#64)', async () => {
    const ok = await cruise({
      'core/store/index.ts': 'export class TrafficRepo {}\n',
      'core/contracts/index.ts': 'export interface FlowRecord { id: string }\n',
      'core/traffic/index.ts':
        "import type { TrafficRepo } from '../store/index.js';\nimport type { FlowRecord } from '../contracts/index.js';\nexport type T = [TrafficRepo, FlowRecord];\n",
    });
    expect(ok.code).toBe(0);
    const bad = await cruise({
      'core/proxy/index.ts': 'export class ProxyServer {}\n',
      'core/traffic/index.ts': "import { ProxyServer } from '../proxy/index.js';\nexport const x = ProxyServer;\n",
    });
    expect(bad.code).not.toBe(0);
    expect(bad.out).toMatch(/traffic-counts-what-ended/);
  });

  it('lets the profiles per network change settings only through the target the app hands them (#64)', async () => {
    const ok = await cruise({
      'core/common/index.ts': 'export const c = 1;\n',
      'core/profiles/index.ts': "import { c } from '../common/index.js';\nexport const p = c;\n",
    });
    expect(ok.code).toBe(0);
    const bad = await cruise({
      'core/router/index.ts': 'export class RoutingState {}\n',
      'core/profiles/index.ts': "import { RoutingState } from '../router/index.js';\nexport const x = RoutingState;\n",
    });
    expect(bad.code).not.toBe(0);
    expect(bad.out).toMatch(/profiles-change-settings-through-the-app/);
  });

  it('fails netstack knowing about ovpn', async () => {
    const r = await cruise({
      'core/ovpn/index.ts': 'export const o = 1;\n',
      'core/netstack/index.ts': "import { o } from '../ovpn/index.js';\nexport const n = o;\n",
    });
    expect(r.out).toMatch(/low-tier-peers/);
  });
  it('fails sysproxy importing anything of core but common', async () => {
    const r = await cruise({
      'core/store/index.ts': 'export const s = 1;\n',
      'core/sysproxy/index.ts': "import { s } from '../store/index.js';\nexport const p = s;\n",
    });
    expect(r.code).not.toBe(0);
    expect(r.out).toMatch(/sysproxy-knows-only-common/);
  });
  it('fails any import cycle, a type-only one too (#47: shared types live in a file of their own)', async () => {
    const cyc = await cruise({
      'core/common/index.ts': "export * from './a.js';\n",
      'core/common/a.ts': "import { b } from './b.js';\nexport const a = () => b;\n",
      'core/common/b.ts': "import { a } from './a.js';\nexport const b = () => a;\n",
    });
    expect(cyc.out).toMatch(/no-circular/);
    const typeOnly = await cruise({
      'core/common/index.ts': "export * from './a.js';\n",
      'core/common/a.ts': "import type { B } from './b.js';\nexport interface A { b?: B }\n",
      'core/common/b.ts': "import type { A } from './a.js';\nexport interface B { a?: A }\n",
    });
    expect(typeOnly.out).toMatch(/no-circular/);
    const typesFile = await cruise({
      'core/common/index.ts': "export * from './a.js';\nexport * from './b.js';\n",
      'core/common/types.ts': 'export interface A { n: number }\nexport interface B { a?: A }\n',
      'core/common/a.ts': "import type { B } from './types.js';\nexport const a = (b: B) => b;\n",
      'core/common/b.ts': "import type { A } from './types.js';\nexport const b = (x: A) => x;\n",
    });
    expect(typesFile.out).toMatch(/no dependency violations/);
  });

  it('core/reach sits on common alone: reach importing a tunnel client or the app is refused, a tunnel client using reach is not (#47)', async () => {
    const ok = await cruise({
      'core/reach/index.ts': "import { e } from '../common/index.js';\nexport const r = e;\n",
      'core/common/index.ts': 'export const e = 1;\n',
      'core/ovpn/index.ts': "import { r } from '../reach/index.js';\nexport const o = r;\n",
    });
    expect(ok.code).toBe(0);
    const bad = await cruise({
      'core/ovpn/index.ts': 'export const o = 1;\n',
      'core/reach/index.ts': "import { o } from '../ovpn/index.js';\nexport const r = o;\n",
    });
    expect(bad.code).not.toBe(0);
    expect(bad.out).toMatch(/reach-above-common/);
  });

  it('fails the renderer importing core beyond the API contract, or a node: module', async () => {
    const r = await cruiseWith(['core', 'renderer'], {
      'core/app/index.ts': 'export const app = 1;\n',
      'core/api/contract.ts': 'export const ops = 1;\n',
      'renderer/src/a.ts':
        "import { ops } from '../../core/api/contract.js';\nimport { app } from '../../core/app/index.js';\nimport { readFileSync } from 'node:fs';\nexport const x = [ops, app, readFileSync];\n",
    });
    expect(r.out).toMatch(/renderer-without-node/);
    expect(r.out).toMatch(/core\/app\/index\.ts/);
    expect(r.out).not.toMatch(/api\/contract\.ts[^\n]*renderer-without-node/);
  });

  it('the window points one way: a component importing a view, or the store a component, is refused', async () => {
    const r = await cruiseWith(['renderer'], {
      'renderer/src/views/Nodes.ts': "import { row } from '../components/row.js';\nexport const Nodes = row;\n",
      'renderer/src/components/row.ts': 'export const row = 1;\n',
      'renderer/src/App.ts': "import { Nodes } from './views/Nodes.js';\nexport const App = Nodes;\n",
    });
    expect(r.out).toMatch(/no dependency violations/);
    const bad = await cruiseWith(['renderer'], {
      'renderer/src/views/Nodes.ts': 'export const Nodes = 1;\n',
      'renderer/src/components/Shell.ts': "import { Nodes } from '../views/Nodes.js';\nexport const Shell = Nodes;\n",
      'renderer/src/store/slice.ts': "import { Shell } from '../components/Shell.js';\nexport const s = Shell;\n",
    });
    expect(bad.out).toMatch(/renderer-layers/);
    expect(bad.out).toMatch(/renderer-ui-above-state/);
  });

  it('core/contracts declares types only: no statement there emits code', () => {
    const dir = join(ROOT, 'core/contracts');
    const code: string[] = [];
    for (const name of readdirSync(dir).filter((n) => n.endsWith('.ts'))) {
      const src = ts.createSourceFile(name, readFileSync(join(dir, name), 'utf8'), ts.ScriptTarget.ES2022, true);
      for (const st of src.statements) {
        const typeOnly =
          ts.isInterfaceDeclaration(st) ||
          ts.isTypeAliasDeclaration(st) ||
          (ts.isImportDeclaration(st) && st.importClause?.isTypeOnly === true) ||
          (ts.isExportDeclaration(st) && st.isTypeOnly);
        if (!typeOnly) code.push(`${name}: ${st.getText(src).slice(0, 60)}`);
      }
    }
    expect(code).toEqual([]);
  });
});
