/**
 * The one-way module map of DEVELOPERS.md, enforced:
 *   app → {api, health, groups, socks5, capture, egress, selector, sysproxy, honesty} → router → {route, netstack, ovpn, sstp, softether, vpngate, store} → reach → common
 * reach (how Gatehop reaches a node or a URL: node trust, node TCP/TLS, the upstream proxy, the
 * SOCKS5 wire, address classes) imports only common;
 * router (routing in one place: the table's state, rule sets, the per-flow decision, sniffing, and
 * the egress each target opens on) imports common, route, vpngate (fetching sets) and the Egress types;
 * capture (`gatehop run`'s gateway) imports common and netstack, and knows the proxy's sessions and
 * the Egress only by their types (it hands each flow to socks5's ProxyServer through an interface);
 * sysproxy knows only common (OS proxy settings; nothing of egresses, the proxy or the store);
 * socks5 sees only the Egress interface (type-only imports of core/egress) and asks core/route where
 * a flow goes; route names a target and never opens one (it imports only common and reach's address classes); netstack never knows
 * about ovpn, sstp or softether, and the three tunnel clients never know each other; every module is imported through its index.ts only; core never touches Electron or
 * the renderer.
 */
const MID = '(api|health|groups|socks5|capture|egress|selector|sysproxy|honesty)';
const LOW = '(route|netstack|ovpn|sstp|softether|vpngate|store)';

module.exports = {
  forbidden: [
    // No circle, not even of types (#47): shared types live in a types file of their own
    // (renderer/src/store/state.ts, core/egress/tunnel-types.ts, core/route/match-types.ts).
    { name: 'no-circular', severity: 'error', from: {}, to: { circular: true } },
    {
      name: 'common-is-the-floor',
      comment: 'core/common imports no other core module',
      severity: 'error',
      from: { path: '^core/common/' },
      to: { path: '^core/(?!common/)' },
    },
    {
      name: 'reach-above-common',
      comment: 'core/reach (node trust, node dials, upstream proxy, SOCKS5 wire, address classes) imports only common',
      severity: 'error',
      from: { path: '^core/reach/' },
      to: { path: '^core/(?!reach/|common/)' },
    },
    {
      name: 'low-tier-points-down',
      comment: 'netstack, ovpn, sstp, softether, vpngate and store import only common (vpngate may read ovpn profiles)',
      severity: 'error',
      from: { path: `^core/${LOW}/` },
      to: { path: `^core/(${MID.slice(1, -1)}|app|router)/` },
    },
    {
      name: 'router-below-the-front-ends',
      comment:
        'core/router imports common, reach, route, vpngate and the Egress types: nothing of the front ends, the tunnels or the app',
      severity: 'error',
      from: { path: '^core/router/' },
      to: { path: '^core/(?!router/|common/|reach/|route/|vpngate/|egress/)' },
    },
    {
      name: 'router-egress-type-only',
      severity: 'error',
      from: { path: '^core/router/' },
      to: { path: '^core/egress/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'low-tier-peers',
      comment:
        'netstack, ovpn, sstp and softether never know each other; they meet in egress (route and store know none of the others)',
      severity: 'error',
      from: { path: '^core/(route|netstack|ovpn|sstp|softether|store)/' },
      to: { path: `^core/${LOW}/`, pathNot: '^core/$1/' },
    },
    {
      name: 'mid-tier-not-app',
      severity: 'error',
      from: { path: `^core/${MID}/` },
      to: { path: '^core/app/' },
    },
    {
      name: 'sysproxy-knows-only-common',
      comment:
        'core/sysproxy changes OS settings; it knows nothing of egresses, the proxy or the store (the app hands it a mirror)',
      severity: 'error',
      from: { path: '^core/sysproxy/' },
      to: { path: '^core/(?!sysproxy/|common/)' },
    },
    {
      name: 'socks5-sees-only-egress-interface',
      comment:
        'socks5 imports common, reach (the SOCKS5 wire), the Egress types, router (where a flow goes and on what) and route types, nothing else of core',
      severity: 'error',
      from: { path: '^core/socks5/' },
      to: { path: '^core/(?!socks5/|common/|reach/|egress/|route/|router/)' },
    },
    {
      name: 'socks5-egress-type-only',
      comment: 'socks5 may import core/egress for types only (import type)',
      severity: 'error',
      from: { path: '^core/socks5/' },
      to: { path: '^core/egress/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'capture-hands-flows-to-the-proxy',
      comment:
        'core/capture imports common and netstack (its gateway stack); the proxy sessions and the Egress it knows by type only',
      severity: 'error',
      from: { path: '^core/capture/' },
      to: { path: '^core/(?!capture/|common/|netstack/|socks5/|egress/)' },
    },
    {
      name: 'capture-socks5-egress-type-only',
      severity: 'error',
      from: { path: '^core/capture/' },
      to: { path: '^core/(socks5|egress)/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'honesty-checks-through-the-egress',
      comment:
        'core/honesty checks a node through the Egress interface alone: it imports common, reach (public roots, address classes) and the Egress types, nothing else of core',
      severity: 'error',
      from: { path: '^core/honesty/' },
      to: { path: '^core/(?!honesty/|common/|reach/|egress/)' },
    },
    {
      name: 'honesty-egress-type-only',
      severity: 'error',
      from: { path: '^core/honesty/' },
      to: { path: '^core/egress/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'egress-not-upwards',
      severity: 'error',
      from: { path: '^core/egress/' },
      to: { path: '^core/(socks5|api|health|groups|honesty|router)/' },
    },
    {
      name: 'catalog-is-data',
      comment:
        'core/api/catalog holds the UI strings the window and the shell share: plain data, importing nothing but itself',
      severity: 'error',
      from: { path: '^core/api/catalog/' },
      to: { path: '^(?!core/api/catalog/)' },
    },
    {
      name: 'index-only',
      comment: "another module's public surface is its index.ts; no deep imports",
      severity: 'error',
      from: { path: '^core/([^/]+)/' },
      to: { path: '^core/([^/]+)/', pathNot: ['^core/$1/', '^core/[^/]+/index\\.ts$'] },
    },
    {
      name: 'core-without-desktop',
      comment: 'core runs in plain Node: no electron, no renderer',
      severity: 'error',
      from: { path: '^core/' },
      to: { path: '(^electron/|^renderer/|^electron$|node_modules/electron/)' },
    },
    {
      name: 'electron-is-thin',
      comment:
        'the shell uses the core only through core/app, core/api (contract, operations, the UI catalogue) and core/common; never the renderer',
      severity: 'error',
      from: { path: '^electron/' },
      to: {
        path: '(^core/(?!app/index\\.ts|api/index\\.ts|api/contract\\.ts|api/catalog/|common/index\\.ts)|^renderer/)',
      },
    },
    {
      name: 'renderer-without-node',
      comment:
        'the renderer runs sandboxed in a browser: no core internals, no node: modules (the contract, its schemas and the UI catalogue are shared)',
      severity: 'error',
      from: { path: '^renderer/' },
      to: {
        path: '(^core/(?!api/contract\\.ts|api/schemas\\.ts|api/catalog/)|^node:|^electron$|node_modules/electron/)',
        dependencyTypesNot: ['type-only'],
      },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^dist/|\\.test\\.ts$)' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.json'] },
  },
};
