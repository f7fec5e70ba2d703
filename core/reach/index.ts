/**
 * How Gatehop reaches a node or a URL: the node trust rule and the public roots, the one TCP and TLS
 * dial to a node, the user's upstream proxy (HTTP CONNECT, SOCKS5, its UDP relay), the SOCKS5 wire
 * format, and the classes of addresses a dial may or may not go to. Above core/common, below every
 * module that dials (see README.md).
 */
export {
  dialThroughUpstream,
  parseSocks5Udp,
  parseUpstreamUrl,
  socks5UdpAssociate,
  socks5UdpHeader,
  type UpstreamDialOptions,
  type UpstreamProxy,
} from './upstream-proxy.js';
export { dialNodeTcp, isNetworkFailure, tcpErrorCode, type NodeTcpOptions } from './node-tcp.js';
export { CARRIER_PATH_MTU, CARRIER_TCP_MSS, clampedTcpSocket } from './path-mtu.js';
export { dialNodeTls, type NodeTlsConnection, type NodeTlsOptions } from './node-tls.js';
export {
  judgeNodeCertificate,
  profileCertificateProblem,
  trustedCas,
  TRUST_RULE_TEXT,
  type NodeTrust,
  type ProfileCertChecks,
  type TrustRule,
  type TrustVerdict,
} from './node-trust.js';
export {
  parseCertificate,
  pemBody,
  pemCertificates,
  publicRoots,
  spkiSha256,
  subjectName,
  type PublicRootMatch,
  type PublicRoots,
} from './public-roots.js';
export {
  encodeSocksAddress,
  encodeSocksUdpHeader,
  parseSocksAddress,
  parseSocksUdpHeader,
  SocksAddrType,
  type AddressParse,
  type SocksAddress,
} from './socks5-wire.js';
export {
  bareAddress,
  classifyAddress,
  compressIpv6,
  ipv6Groups,
  ipv6ToBytes,
  isLocalName,
  refusedAddress,
  defaultAddressPolicy,
  type AddressPolicy,
  unmapIpv4,
  type AddressClass,
} from './address.js';
export { httpGet, type Dialer, type DialVia, type HttpGetOptions, type HttpGetResult } from './http-get.js';
export { directDialer, isLocalHost, localGoesDirect, upstreamDialer } from './direct-dialer.js';
export { guardedDialer } from './guarded-dialer.js';
