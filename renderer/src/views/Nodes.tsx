import { memo, useDeferredValue, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useActions, useApp, useNow } from '../components/context.js';
import { ImportButton, ListOrigin, NoListHelp, useListDrop } from '../components/ListSources.js';
import { useWindowedRows } from '../components/use-windowed-rows.js';
import { countryName, flagOf, formatAgo, formatClock, formatMs, formatNumber, protocolLabel } from '../format.js';
import type { NodeDto } from '../store/types.js';
import { detach } from '../detach.js';
import { ProtocolOrderOptions } from '../components/ProtocolOrder.js';
import { CheckButton, ConfirmFlaggedPick, HonestyMark, tamperingOf } from '../components/Honesty.js';

type Column = 'country' | 'host' | 'proto' | 'prior' | 'rttMs' | 'delay' | 'score' | 'history' | 'listed' | 'state';
const COLUMNS: Array<{ key: Column; label: string; numeric?: boolean }> = [
  { key: 'country', label: 'nodes.country' },
  { key: 'host', label: 'nodes.host' },
  { key: 'proto', label: 'nodes.protocol' },
  { key: 'prior', label: 'nodes.prior', numeric: true },
  { key: 'rttMs', label: 'nodes.rtt', numeric: true },
  { key: 'delay', label: 'nodes.delay', numeric: true },
  { key: 'score', label: 'nodes.score', numeric: true },
  { key: 'history', label: 'nodes.history', numeric: true },
  { key: 'listed', label: 'nodes.listed', numeric: true },
  { key: 'state', label: 'nodes.state' },
];
const STATE_ORDER = { active: 0, standby: 1, draining: 2, candidate: 3, backoff: 4 } as const;

function sortValue(n: NodeDto, c: Column): string | number | null {
  switch (c) {
    case 'country':
      return countryName(n.countryCode, n.country);
    case 'host':
      return n.host;
    case 'proto':
      return `${n.protocols[0]?.protocol ?? ''} ${n.proto}`;
    case 'history':
      return n.successes + n.failures === 0 ? null : n.successes / (n.successes + n.failures);
    case 'state':
      return STATE_ORDER[n.state];
    case 'listed':
      return n.lastListedAt;
    case 'delay':
      return n.urlDelayMs;
    default:
      return n[c];
  }
}

/** Sorted and filtered; nulls last whatever the direction. Pure, so 250 nodes cost one pass each. */
export function sortAndFilter(
  nodes: readonly NodeDto[],
  opts: { sort: Column; desc: boolean; country: string; proto: string; text: string },
): NodeDto[] {
  const text = opts.text.trim().toLowerCase();
  const out = nodes.filter(
    (n) =>
      (!opts.country || n.countryCode === opts.country) &&
      (!opts.proto ||
        (opts.proto === 'sstp' || opts.proto === 'sevpn'
          ? n.protocols.some((p) => p.protocol === opts.proto)
          : n.proto === opts.proto && n.protocols.some((p) => p.protocol === 'openvpn'))) &&
      (!text ||
        n.host.toLowerCase().includes(text) ||
        n.ip.includes(text) ||
        n.country.toLowerCase().includes(text) ||
        countryName(n.countryCode, n.country).toLowerCase().includes(text) ||
        n.id.toLowerCase().includes(text)),
  );
  const dir = opts.desc ? -1 : 1;
  return out.sort((a, b) => {
    const x = sortValue(a, opts.sort);
    const y = sortValue(b, opts.sort);
    if (x === null && y === null) return a.id.localeCompare(b.id);
    if (x === null) return 1;
    if (y === null) return -1;
    const c = typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y));
    return c * dir || a.id.localeCompare(b.id);
  });
}

export function Nodes() {
  const { t } = useTranslation();
  const nodes = useApp((s) => s.nodes);
  const state = useApp((s) => s.nodesState);
  const error = useApp((s) => s.nodesError);
  const refreshing = useApp(
    (s) => s.refresh !== null && (s.refresh.phase === 'fetching' || s.refresh.phase === 'probing'),
  );
  const actions = useActions();
  const drop = useListDrop();
  const [sort, setSort] = useState<Column>('score');
  const [desc, setDesc] = useState(true);
  const [country, setCountry] = useState('');
  const [proto, setProto] = useState('');
  const [text, setText] = useState('');
  const deferredText = useDeferredValue(text);
  const lng = useTranslation().i18n.language;
  const countries = useMemo(
    () =>
      [...new Map(nodes.map((n) => [n.countryCode, countryName(n.countryCode, n.country, lng)])).entries()].sort(
        (a, b) => a[1].localeCompare(b[1], lng),
      ),
    [nodes, lng],
  );
  const shown = useMemo(
    () => sortAndFilter(nodes, { sort, desc, country, proto, text: deferredText }),
    [nodes, sort, desc, country, proto, deferredText],
  );
  const results = useApp((s) => s.testResults);

  const onSort = (c: Column) => {
    if (c === sort) setDesc(!desc);
    else {
      setSort(c);
      setDesc(c === 'score' || c === 'prior' || c === 'history' || c === 'listed');
    }
  };

  return (
    <section aria-labelledby="nodes-h" className={`view${drop.dragging ? ' dragging' : ''}`} {...drop.handlers}>
      <div className="view-head">
        <h2 id="nodes-h">{t('nodes.title')}</h2>
        <span className="head-actions">
          <TestAll />
          <ImportButton />
          <button
            type="button"
            onClick={() => detach(actions.refreshNodes())}
            disabled={refreshing}
            aria-busy={refreshing}
          >
            {t('nodes.refresh')}
          </button>
        </span>
      </div>
      {drop.dragging ? <p className="drop-hint">{t('list.import.drop')}</p> : null}
      {drop.said ? (
        <p role={drop.said.ok ? 'status' : 'alert'} className={drop.said.ok ? 'import-ok' : 'field-error'}>
          {drop.said.text}
        </p>
      ) : null}
      <ListOrigin />
      <TestProgress />
      <div className="filters" role="search">
        <label>
          {t('nodes.filter')}
          <input
            type="search"
            value={text}
            placeholder={t('nodes.filterPlaceholder')}
            onChange={(e) => setText(e.target.value)}
          />
        </label>
        <label>
          {t('nodes.country')}
          <select value={country} onChange={(e) => setCountry(e.target.value)}>
            <option value="">{t('nodes.allCountries')}</option>
            {countries.map(([code, name]) => (
              <option key={code} value={code}>
                {flagOf(code)} {name}
              </option>
            ))}
          </select>
        </label>
        <label>
          {t('nodes.protocol')}
          <select value={proto} onChange={(e) => setProto(e.target.value)}>
            <option value="">{t('nodes.allProtocols')}</option>
            <option value="tcp">OpenVPN TCP</option>
            <option value="udp">OpenVPN UDP</option>
            <option value="sstp">SSTP</option>
            <option value="sevpn">SE-VPN</option>
          </select>
        </label>
        <span className="muted" aria-live="polite">
          {t('nodes.count', { shown: shown.length, total: nodes.length })}
        </span>
      </div>
      {state === 'loading' ? (
        <p className="muted" aria-busy="true">
          {t('nodes.loading')}
        </p>
      ) : state === 'error' ? (
        <p role="alert">{t('nodes.error', { message: error })}</p>
      ) : nodes.length === 0 ? (
        <NoListHelp />
      ) : (
        <NodeTable nodes={shown} sort={sort} desc={desc} onSort={onSort} results={results} />
      )}
    </section>
  );
}

/**
 * Re-renders only when its rows or sort change: latency ticks and status updates pass it by.
 * Windowed: only the rows in view are in the DOM (aria-rowcount and aria-rowindex say where).
 */
type Results = Record<string, { ms: number | null; at: number; error: string | null }>;
const NO_RESULTS: Results = {};

export const NodeTable = memo(function NodeTable({
  nodes,
  sort,
  desc,
  onSort,
  results = NO_RESULTS,
}: {
  nodes: NodeDto[];
  sort: Column;
  desc: boolean;
  onSort: (c: Column) => void;
  results?: Results;
}) {
  const { t } = useTranslation();
  renderCounts.nodeTable++;
  const w = useWindowedRows(nodes.length);
  return (
    <div className="table-wrap windowed" ref={w.ref} onScroll={w.onScroll}>
      <table className="nodes" aria-rowcount={nodes.length + 1}>
        <caption className="sr-only">{t('nodes.title')}</caption>
        <thead>
          <tr aria-rowindex={1}>
            {COLUMNS.map((c) => (
              <th
                key={c.key}
                scope="col"
                aria-sort={sort === c.key ? (desc ? 'descending' : 'ascending') : 'none'}
                className={c.numeric ? 'num' : undefined}
              >
                <button
                  type="button"
                  className="th"
                  onClick={() => onSort(c.key)}
                  aria-label={t('nodes.sortBy', { column: t(c.label) })}
                >
                  {t(c.label)}
                  {sort === c.key ? (desc ? ' ▾' : ' ▴') : ''}
                </button>
              </th>
            ))}
            <th scope="col">{t('nodes.action')}</th>
          </tr>
        </thead>
        <tbody>
          {w.padTop > 0 ? <tr aria-hidden="true" className="pad" style={{ height: w.padTop }} /> : null}
          {nodes.slice(w.start, w.end).map((n, i) => (
            <NodeRow
              key={n.id}
              node={n}
              result={results[n.id]}
              index={w.start + i + 2}
              measure={i === 0 ? w.measure : undefined}
            />
          ))}
          {w.padBottom > 0 ? <tr aria-hidden="true" className="pad" style={{ height: w.padBottom }} /> : null}
        </tbody>
      </table>
    </div>
  );
});

const NodeRow = memo(function NodeRow({
  node: n,
  result,
  index,
  measure,
}: {
  node: NodeDto;
  result?: Results[string] | undefined;
  index: number;
  measure?: ((el: HTMLElement | null) => void) | undefined;
}) {
  const { t, i18n } = useTranslation();
  const actions = useActions();
  const [confirming, setConfirming] = useState(false);
  renderCounts.nodeRow++;
  const terms = n.scoreTerms
    ? t('nodes.scoreTerms', {
        latency: formatNumber(n.scoreTerms.latency, 1, 1),
        prior: formatNumber(n.scoreTerms.prior, 1, 1),
        history: formatNumber(n.scoreTerms.history, 1, 1),
        failures: formatNumber(n.scoreTerms.recentFailures, 1, 1),
      })
    : undefined;
  // Left in use for how it failed (#60): said with when and until when, whatever its back-off.
  const stateText =
    n.left && n.state !== 'active'
      ? t(`state.left.${n.left.shape}`, {
          time: formatClock(n.left.at, i18n.language),
          until: formatClock(n.left.until, i18n.language),
        })
      : n.state === 'backoff' && n.backoffUntil
        ? t('state.backoff', { time: formatClock(n.backoffUntil, i18n.language) })
        : t(`state.${n.state}`);
  return (
    <tr className={n.state === 'active' ? 'row-active' : undefined} aria-rowindex={index} ref={measure}>
      <td>
        <span aria-hidden="true">{flagOf(n.countryCode)} </span>
        {countryName(n.countryCode, n.country)}
      </td>
      <td className="host">{n.host}</td>
      <td>
        <Protocols node={n} />
      </td>
      <td className="num">{n.prior === null ? '–' : formatNumber(n.prior, 2, 2)}</td>
      <td className="num">{formatMs(n.rttMs, t)}</td>
      <td className="num" data-testid={`delay-${n.id}`}>
        {result ? (
          result.ms === null ? (
            <span className="muted" title={result.error ?? undefined}>
              {t('nodes.testFailed')}
            </span>
          ) : (
            formatMs(result.ms, t)
          )
        ) : (
          formatMs(n.urlDelayMs, t)
        )}
      </td>
      <td className="num">
        {n.score === null ? (
          '–'
        ) : (
          <span
            className="terms"
            tabIndex={0}
            title={terms}
            aria-label={`${formatNumber(n.score, 1, 1)}: ${terms ?? ''}`}
          >
            {formatNumber(n.score, 1, 1)}
          </span>
        )}
      </td>
      <td className="num">{t('nodes.historyValue', { ok: n.successes, failed: n.failures })}</td>
      <td className="num">{n.lastListedAt ? <Listed at={n.lastListedAt} /> : '–'}</td>
      <td>
        <span className={`state state-${n.state}`} data-testid={`state-${n.id}`}>
          {stateText}
        </span>
        {n.excluded === 'needs-udp' ? <span className="muted"> · {t('nodes.needsUdp')}</span> : null}
        {n.excluded === 'ca-in-clear' ? (
          <span className="muted" title={t('nodes.caInClearWhy')} data-testid={`ca-in-clear-${n.id}`}>
            {' '}
            · {t('nodes.caInClear')}
          </span>
        ) : null}
        {n.weakTls ? (
          <span className="weak-tls" title={t('nodes.weakTlsWhy')} data-testid={`weak-tls-${n.id}`}>
            {' '}
            · {t('nodes.weakTls')}
          </span>
        ) : null}
        <HonestyMark node={n} />
      </td>
      <td className="row-actions">
        {n.state === 'active' ? (
          <span className="active-mark">{t('nodes.isActive')}</span>
        ) : (
          <button
            type="button"
            aria-label={t('nodes.connect', { host: n.host })}
            onClick={() =>
              // A node found to tamper: the user is told what was found before it is used.
              tamperingOf(n) && !n.honesty?.accepted ? setConfirming(true) : detach(actions.switchTo(n.id))
            }
          >
            {t('nodes.connectShort')}
          </button>
        )}{' '}
        <button
          type="button"
          className="secondary"
          aria-label={t('nodes.testFor', { host: n.host })}
          onClick={() => detach(actions.testNode(n.id))}
        >
          {t('nodes.test')}
        </button>{' '}
        <CheckButton node={n} /> <NodeProtocolOrder node={n} />
        {confirming ? <ConfirmFlaggedPick node={n} onClose={() => setConfirming(false)} /> : null}
      </td>
    </tr>
  );
});

/**
 * This node's own protocol order (config tunnel.nodeProtocols): "as in Settings", or an order that
 * replaces it for this node (one protocol alone forbids the others here). Absent where the core
 * offers no settings.
 */
function NodeProtocolOrder({ node: n }: { node: NodeDto }) {
  const { t } = useTranslation();
  const actions = useActions();
  const own = useApp((s) => s.settings?.nodeProtocols[n.id]?.join(',') ?? '');
  const hasSettings = useApp((s) => s.settings !== null);
  if (!hasSettings) return null;
  return (
    <select
      className="node-order"
      data-testid={`node-order-${n.id}`}
      aria-label={t('nodes.ownOrder', { host: n.host })}
      title={t('nodes.ownOrderWhy')}
      value={own}
      onChange={(e) =>
        detach(
          actions.setNodeProtocols(
            n.id,
            e.target.value ? (e.target.value.split(',') as Array<'openvpn' | 'sstp' | 'sevpn'>) : null,
          ),
        )
      }
    >
      <option value="">{t('nodes.orderAsSettings')}</option>
      <ProtocolOrderOptions current={own} />
    </select>
  );
}

/** "Test all": starts a URL test through every node, or cancels the one running. */
function TestAll() {
  const { t } = useTranslation();
  const running = useApp((s) => s.nodeTest?.state === 'running');
  const vpn = useApp((s) => s.status?.egress === 'vpngate');
  const actions = useActions();
  if (!vpn) return null;
  return running ? (
    <button type="button" onClick={() => detach(actions.cancelTest())}>
      {t('nodes.testCancel')}
    </button>
  ) : (
    <button type="button" onClick={() => detach(actions.testAll())}>
      {t('nodes.testAll')}
    </button>
  );
}

/** Progress of the running or last "Test all": a progress bar while it runs, its outcome after. */
function TestProgress() {
  const { t } = useTranslation();
  const p = useApp((s) => s.nodeTest);
  if (!p) return null;
  if (p.state === 'running')
    return (
      <div className="test-progress" role="status" aria-live="polite">
        <progress max={p.total} value={p.done} aria-label={t('nodes.testAll')} />{' '}
        <span>{t('nodes.testing', { done: formatNumber(p.done), total: formatNumber(p.total) })}</span>
      </div>
    );
  return (
    <p className="muted" role="status">
      {p.state === 'done'
        ? t('nodes.testDone', { total: formatNumber(p.total), ok: formatNumber(p.ok), failed: formatNumber(p.failed) })
        : t('nodes.testCancelled', { done: formatNumber(p.done), total: formatNumber(p.total) })}
    </p>
  );
}

/**
 * The ways to reach a node, in the order they are tried, each marked with what it did: worked
 * (✓), failed (✗, the error as its title), or not tried yet.
 */
function Protocols({ node: n }: { node: NodeDto }) {
  const { t } = useTranslation();
  return (
    <span className="protocols">
      {n.protocols.map((p, i) => {
        const label = protocolLabel(p.protocol, p.protocol === 'openvpn' ? n.proto : null);
        const said =
          p.lastOk === true
            ? t('nodes.protocolWorked', { protocol: label })
            : p.lastOk === false
              ? t('nodes.protocolFailed', { protocol: label, error: p.lastError ?? '' })
              : t('nodes.protocolUntried', { protocol: label });
        return (
          <span
            key={p.protocol}
            className={`protocol protocol-${p.lastOk === true ? 'ok' : p.lastOk === false ? 'failed' : 'untried'}`}
            title={said}
            aria-label={said}
          >
            {i > 0 ? ' · ' : ''}
            {label}
            {p.lastOk === true ? ' ✓' : p.lastOk === false ? ' ✗' : ''}
          </span>
        );
      })}
    </span>
  );
}

/** "3 h ago": how long since a list named the node (the pool keeps nodes for days). */
function Listed({ at }: { at: number }) {
  const { t, i18n } = useTranslation();
  const now = useNow();
  return (
    <time dateTime={new Date(at).toISOString()} title={new Date(at).toLocaleString(i18n.language)}>
      {formatAgo(at, now(), t)}
    </time>
  );
}

/** Render counters the tests read (a latency tick must not re-render the node table). */
export const renderCounts = { nodeTable: 0, nodeRow: 0 };
