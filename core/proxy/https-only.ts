/**
 * privacy.httpsOnly: only TLS goes through a volunteer node, because the node could read and
 * change anything else (README "What a node can see"). The decision is "a TLS ClientHello, or
 * refused", made on the client's first bytes before anything reaches the node (#59): plain HTTP
 * (any method, registered or not) gets a page that says why, in the four languages of the window;
 * any other protocol, and a client that never writes, is closed. DIRECT is never touched.
 */

/** What a client's first bytes are, as far as HTTPS-only goes. */
export type FirstBytesVerdict =
  /** A TLS ClientHello: it passes. */
  | 'tls'
  /** The start of a plain HTTP request: refused with the page. */
  | 'http'
  /** Something else: refused (closed). */
  | 'other'
  /** Nothing yet, or the start of a TLS record too short to tell: wait for more. */
  | 'undecided';

/**
 * A TLS record is content type 22 (handshake), version 3.x (x ≤ 4), a length, then the handshake
 * type: 1 is ClientHello. Anything that cannot become that is judged at once.
 */
export function judgeFirstBytes(b: Buffer): FirstBytesVerdict {
  if (b.length === 0) return 'undecided';
  if (b[0] === 0x16) {
    if (b.length >= 2 && b[1] !== 0x03) return 'other';
    if (b.length >= 3 && b[2]! > 0x04) return 'other';
    if (b.length < 6) return 'undecided';
    return b[5] === 0x01 ? 'tls' : 'other';
  }
  // A request line starts with a token of letters, then a space: GET, and REPORT, MKCOL, PRI alike.
  return /^[A-Za-z]{1,24}( |$)/.test(b.subarray(0, 25).toString('latin1')) ? 'http' : 'other';
}

const PAGE = `<!doctype html>
<meta charset="utf-8">
<title>403 HTTPS only</title>
<h1>403: HTTPS only through volunteer nodes</h1>
<p>Gatehop refused this plain HTTP request: it would cross a volunteer's computer unencrypted, where it can be read and changed. Use <b>https://</b>, or turn off "HTTPS only through volunteer nodes" in Gatehop's Settings.</p>
<p lang="zh-CN">Gatehop 拒绝了这个未加密的 HTTP 请求：它会以明文经过志愿者的电脑，可能被读取或篡改。请使用 <b>https://</b>，或在 Gatehop 设置中关闭“通过志愿节点只用 HTTPS”。</p>
<p lang="zh-TW">Gatehop 拒絕了這個未加密的 HTTP 請求：它會以明文經過志願者的電腦，可能被讀取或竄改。請使用 <b>https://</b>，或在 Gatehop 設定中關閉「經由志願節點只用 HTTPS」。</p>
<p lang="fa" dir="rtl">Gatehop این درخواست HTTP رمزنشده را نپذیرفت: این درخواست بدون رمزنگاری از رایانهٔ یک داوطلب می‌گذرد و می‌تواند خوانده یا تغییر داده شود. از <b>https://</b> استفاده کنید یا «فقط HTTPS از راه گره‌های داوطلب» را در تنظیمات Gatehop خاموش کنید.</p>
`;

/** The whole refusal as it goes on the wire to an HTTP client. */
export function httpsOnlyResponse(): string {
  const body = Buffer.from(PAGE, 'utf8');
  return (
    'HTTP/1.1 403 Forbidden\r\nContent-Type: text/html; charset=utf-8\r\n' +
    `Content-Length: ${body.length}\r\nConnection: close\r\nCache-Control: no-store\r\n\r\n${PAGE}`
  );
}

/** The page alone (an HTTP proxy request answered through Node's ServerResponse). */
export const HTTPS_ONLY_PAGE = PAGE;
