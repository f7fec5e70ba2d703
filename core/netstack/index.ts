import type { Stack } from './stack.js';
export { Stack, type StackOptions, type StackStats, type StackLease, type ConnectOptions } from './stack.js';
export { TcpStream, type TcpInfo, type TcpStreamStats } from './tcp-stream.js';
export { StackUdpSocket, type StackDatagram } from './udp-socket.js';
export { DnsResolver, type DnsResolverOptions, type UdpOpener } from './dns-resolver.js';
export { DohTransport, parseDohAnswer, type DohAnswer, type DohEndpoint, type TcpOpener } from './doh-transport.js';
export { LwipErr, lwipErrName } from './lwip-errors.js';
export { lwipModule as compileLwip } from './wasm-module.js';

/**
 * For tests: the stack's next call into lwIP fails as an lwIP assertion would (a bug in lwIP met
 * by hostile or unlucky traffic), so the failure path can be driven on a live tunnel.
 */
export function injectLwipAssertion(stack: Stack): void {
  stack.injectAssertionForTest();
}
