/**
 * The one-way module map of DEVELOPERS.md, enforced:
 *   app → {api, groups, health, selector, honesty, proxy, capture, sysproxy, share, traffic, profiles} → {router, egress}
 *       → {rules, netstack, ovpn, sstp, softether, vpngate, store} → reach → {contracts, common}
 * contracts holds only the interfaces several layers share (the Egress and its lease, a client
 * connection, the capture gateway's inbound): types, no code, importing nothing of core, so a front
 * end or a check can name an Egress without knowing any egress;
 * reach (how Gatehop reaches a node or a URL: node trust, node TCP/TLS, the upstream proxy, the
 * SOCKS5 wire, address classes, the one HTTP GET and its dialers) imports only common;
 * router (routing in one place: the table's state, rule sets, the per-flow decision, sniffing)
 * imports common, contracts, reach and rules; egress (the tunnels as Egresses) imports the tunnel
 * clients and netstack; neither knows the other;
 * proxy (the front ends: SOCKS5, HTTP, PAC, captured flows) sees only the interfaces and asks router
 * where a flow goes; capture (`gatehop run`'s gateway, TUN mode) imports netstack and hands each flow
 * to the proxy through contracts' CaptureInbound; honesty checks a node through the Egress interface;
 * share (the LAN listener for other devices) opens a proxy the app makes and knows nothing below it;
 * traffic (the ledger of where the bytes went, the closed connections) counts flow records the app
 * hands it from the proxy and keeps them in the store; profiles (a profile per network) decides which
 * profile applies and changes the user's settings only through the target the app hands it;
 * sysproxy knows only common (OS proxy settings); rules names a target and never opens one;
 * netstack never knows about ovpn, sstp or softether, and the three tunnel clients never know each
 * other; every module is imported through its index.ts only; core never touches Electron or the
 * renderer.
 */
const MID = '(api|health|groups|proxy|capture|selector|sysproxy|honesty|share|traffic|profiles)';
const LOW = '(rules|netstack|ovpn|sstp|softether|vpngate|store)';

module.exports = {
  forbidden: [
    // No circle, not even of types (#47): shared types live in a types file of their own
    // (renderer/src/store/state.ts, core/contracts, core/rules/match-types.ts).
    { name: 'no-circular', severity: 'error', from: {}, to: { circular: true } },
    {
      name: 'common-is-the-floor',
      comment: 'core/common imports no other core module',
      severity: 'error',
      from: { path: '^core/common/' },
      to: { path: '^core/(?!common/)' },
    },
    {
      name: 'contracts-are-interfaces',
      comment: 'core/contracts holds shared interfaces and imports nothing of core',
      severity: 'error',
      from: { path: '^core/contracts/' },
      to: { path: '^core/(?!contracts/)' },
    },
    {
      name: 'reach-above-common',
      comment:
        'core/reach (node trust, node dials, upstream proxy, SOCKS5 wire, address classes, HTTP GET) imports only common',
      severity: 'error',
      from: { path: '^core/reach/' },
      to: { path: '^core/(?!reach/|common/)' },
    },
    {
      name: 'low-tier-points-down',
      comment: 'rules, netstack, ovpn, sstp, softether, vpngate and store import only common, contracts and reach',
      severity: 'error',
      from: { path: `^core/${LOW}/` },
      to: { path: `^core/(${MID.slice(1, -1)}|app|router|egress)/` },
    },
    {
      name: 'low-tier-peers',
      comment:
        'rules, netstack, ovpn, sstp, softether and store never know each other; they meet in egress (vpngate may read ovpn profiles)',
      severity: 'error',
      from: { path: '^core/(rules|netstack|ovpn|sstp|softether|store)/' },
      to: { path: `^core/${LOW}/`, pathNot: '^core/$1/' },
    },
    {
      name: 'router-knows-rules-not-egresses',
      comment: 'core/router imports common, contracts, reach and rules: no egress, no tunnel, no front end',
      severity: 'error',
      from: { path: '^core/router/' },
      to: { path: '^core/(?!router/|common/|contracts/|reach/|rules/)' },
    },
    {
      name: 'egress-knows-tunnels-not-routing',
      comment:
        'core/egress imports the tunnel clients, netstack, reach, contracts and common: no routing, no front end',
      severity: 'error',
      from: { path: '^core/egress/' },
      to: { path: '^core/(?!egress/|common/|contracts/|reach/|netstack/|ovpn/|sstp/|softether/)' },
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
      name: 'proxy-sees-only-interfaces',
      comment:
        'proxy imports common, contracts (the Egress), reach (the SOCKS5 wire), router (where a flow goes and on what) and rules types: no egress implementation',
      severity: 'error',
      from: { path: '^core/proxy/' },
      to: { path: '^core/(?!proxy/|common/|contracts/|reach/|rules/|router/)' },
    },
    {
      name: 'share-is-a-listener-of-the-proxy',
      comment:
        'core/share (the LAN listener, its devices and phone page) imports common, reach (address forms) and the proxy: it opens a ProxyServer the app makes, and knows no egress, tunnel or store',
      severity: 'error',
      from: { path: '^core/share/' },
      to: { path: '^core/(?!share/|common/|reach/|proxy/)' },
    },
    {
      name: 'traffic-counts-what-ended',
      comment:
        'core/traffic imports common, contracts (the FlowRecord) and store (its repository): it never sees a session, an egress or a rule',
      severity: 'error',
      from: { path: '^core/traffic/' },
      to: { path: '^core/(?!traffic/|common/|contracts/|store/)' },
    },
    {
      name: 'profiles-change-settings-through-the-app',
      comment:
        'core/profiles (which profile applies on which network) imports common only: it reads and changes the settings through the target the app hands it, and never sees a router, a tunnel or the store',
      severity: 'error',
      from: { path: '^core/profiles/' },
      to: { path: '^core/(?!profiles/|common/)' },
    },
    {
      name: 'capture-hands-flows-to-the-proxy',
      comment: 'core/capture imports common, contracts (CaptureInbound) and netstack (its gateway stack)',
      severity: 'error',
      from: { path: '^core/capture/' },
      to: { path: '^core/(?!capture/|common/|contracts/|netstack/)' },
    },
    {
      name: 'honesty-checks-through-the-egress',
      comment:
        'core/honesty checks a node through the Egress interface alone: it imports common, contracts and reach (public roots, address classes)',
      severity: 'error',
      from: { path: '^core/honesty/' },
      to: { path: '^core/(?!honesty/|common/|contracts/|reach/)' },
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
      name: 'renderer-layers',
      comment:
        'the window points one way: the shell (main.tsx, App.tsx) → views/ → components/ → {store/, client/, i18n/, format, detach}',
      severity: 'error',
      from: { path: '^renderer/src/(components|store|client|i18n)/|^renderer/src/(format|detach)\\.ts$' },
      to: { path: '^renderer/src/(views/|App\\.tsx$|main\\.tsx$)' },
    },
    {
      name: 'renderer-ui-above-state',
      comment: 'the store, the core client and the catalogue know no component',
      severity: 'error',
      from: { path: '^renderer/src/(store|client|i18n)/' },
      to: { path: '^renderer/src/components/' },
    },
    {
      name: 'renderer-views-below-the-shell',
      severity: 'error',
      from: { path: '^renderer/src/views/' },
      to: { path: '^renderer/src/(App|main)\\.tsx$' },
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
