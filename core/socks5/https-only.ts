/**
 * privacy.httpsOnly: plain HTTP through a volunteer node is refused, because the node could read
 * and change it (README "What a node can see"). TLS and other protocols pass; DIRECT is never
 * touched. The refusal is a page the browser shows, in the four languages of the window, saying
 * why and what to do.
 */

const METHOD = /^(GET|HEAD|POST|PUT|DELETE|OPTIONS|PATCH|TRACE|PROPFIND|CONNECT) \S/;

/** The client's first bytes are a plain HTTP request (not TLS, not another protocol). */
export function isPlainHttp(first: Buffer): boolean {
  return METHOD.test(first.subarray(0, 32).toString('latin1'));
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
