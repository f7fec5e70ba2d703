/** The leak test's findings in plain words (#64): what the card shows, from the core's report and this page's WebRTC. */
import type { LeakReport } from '../../core/api/schemas.js';
import { countryName } from './format.js';
import type { WebRtcFindings } from './webrtc-check.js';

export type Verdict = 'ok' | 'warn' | 'info' | 'off';
export interface Finding {
  part: 'exit' | 'resolver' | 'ipv6' | 'webrtc';
  verdict: Verdict;
  text: string;
}
export type T = (key: string, vars?: Record<string, unknown>) => string;

/** The four findings in plain words, from the core's report and what WebRTC showed in this page. */
export function leakFindings(r: LeakReport, w: WebRtcFindings, t: T): Finding[] {
  const out: Finding[] = [];
  const e = r.exit;
  out.push(
    e.address
      ? {
          part: 'exit',
          verdict: 'ok',
          text: t('leak.exitOk', {
            address: e.address,
            country: e.country ? ` (${countryName(e.country, e.country)})` : '',
          }),
        }
      : e.error
        ? { part: 'exit', verdict: 'off', text: t('leak.exitFailed', { error: e.error }) }
        : { part: 'exit', verdict: 'off', text: t('leak.exitOff') },
  );
  const d = r.resolver;
  out.push(
    d.address
      ? {
          part: 'resolver',
          // The node's resolver sees the names: not a leak to the user's network, but worth a word.
          verdict: d.encrypted ? 'ok' : 'info',
          text: t(d.encrypted ? 'leak.resolverEncrypted' : 'leak.resolverOk', { address: d.address }),
        }
      : d.error
        ? { part: 'resolver', verdict: 'off', text: t('leak.resolverFailed', { error: d.error }) }
        : { part: 'resolver', verdict: 'off', text: t('leak.resolverOff') },
  );
  const v6 = r.ipv6;
  out.push(
    !v6.address || v6.defaultRoute === false
      ? { part: 'ipv6', verdict: 'ok', text: t('leak.ipv6None') }
      : v6.defaultRoute === null
        ? { part: 'ipv6', verdict: 'info', text: t('leak.ipv6Unknown', { address: v6.address }) }
        : { part: 'ipv6', verdict: 'warn', text: t('leak.ipv6Exposed', { address: v6.address }) },
  );
  if (!w.supported) out.push({ part: 'webrtc', verdict: 'off', text: t('leak.webrtcUnsupported') });
  else if (!r.stunUrl) out.push({ part: 'webrtc', verdict: 'off', text: t('leak.webrtcOff') });
  else {
    const own = w.public.find((a) => a !== e.address);
    const local = w.local.length
      ? ` ${t('leak.webrtcLocal', { addresses: w.local.join(', ') })}`
      : w.hidden
        ? ` ${t('leak.webrtcHidden')}`
        : '';
    const sysproxy = t(
      r.systemProxy === true
        ? 'leak.sysproxyOn'
        : r.systemProxy === false
          ? 'leak.sysproxyOff'
          : 'leak.sysproxyUnknown',
    );
    out.push(
      own
        ? { part: 'webrtc', verdict: 'warn', text: t('leak.webrtcLeak', { address: own, sysproxy }) + local }
        : w.public.length
          ? { part: 'webrtc', verdict: 'ok', text: t('leak.webrtcThrough', { address: w.public[0] }) + local }
          : {
              part: 'webrtc',
              verdict: local ? 'warn' : 'info',
              text: t('leak.webrtcNone', { stun: r.stunUrl }) + local,
            },
    );
  }
  return out;
}
