/** VPN Gate's own list endpoints; `--api` (config `api`) replaces them. */
export const OFFICIAL_ENDPOINTS: readonly string[] = Object.freeze([
  'https://www.vpngate.net/api/iphone/',
  'http://www.vpngate.net/api/iphone/',
]);
