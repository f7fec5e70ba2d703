/**
 * What WebRTC in this page shows a site (#64's leak test): the addresses its ICE candidates carry.
 * A browser gathers them outside any proxy: host candidates (this computer's own addresses, or an
 * mDNS name where the browser hides them) and, with a STUN server, server-reflexive ones (the
 * public address the STUN server saw: the one a site would learn). Gathering ends when the browser
 * says so or after `timeoutMs`; the connection is closed either way.
 */
export interface WebRtcFindings {
  /** RTCPeerConnection exists here. */
  supported: boolean;
  /** This computer's own addresses in host candidates (not mDNS names). */
  local: string[];
  /** Host candidates hidden behind mDNS names (xxxx.local). */
  hidden: boolean;
  /** Public addresses a STUN server saw (srflx candidates). */
  public: string[];
}

const CANDIDATE = /^candidate:\S+ \d+ (?:udp|tcp) \d+ (\S+) \d+ typ (host|srflx|prflx|relay)/i;

/** The address and type of one ICE candidate line, or null for one that is not. */
export function parseCandidate(line: string): { address: string; type: string } | null {
  const m = CANDIDATE.exec(line.replace(/^a=/, '').trim());
  return m ? { address: m[1]!, type: m[2]!.toLowerCase() } : null;
}

export async function gatherWebRtc(stunUrl: string | null, timeoutMs = 5_000): Promise<WebRtcFindings> {
  if (typeof RTCPeerConnection === 'undefined') return { supported: false, local: [], hidden: false, public: [] };
  const pc = new RTCPeerConnection({ iceServers: stunUrl ? [{ urls: stunUrl }] : [] });
  const local = new Set<string>();
  const pub = new Set<string>();
  let hidden = false;
  try {
    pc.createDataChannel('leak-test');
    const done = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      pc.onicecandidate = (e) => {
        if (!e.candidate) {
          clearTimeout(timer);
          resolve();
          return;
        }
        const c = parseCandidate(e.candidate.candidate);
        if (!c) return;
        if (c.type === 'srflx' || c.type === 'prflx') pub.add(c.address);
        else if (c.type === 'host') {
          if (c.address.endsWith('.local')) hidden = true;
          else local.add(c.address);
        }
      };
    });
    await pc.setLocalDescription(await pc.createOffer());
    await done;
  } finally {
    pc.close();
  }
  return { supported: true, local: [...local], hidden, public: [...pub] };
}
