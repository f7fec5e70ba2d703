export { Stack, type StackOptions, type StackStats, type ConnectOptions } from './stack.js';
export { TcpStream, type TcpInfo, type TcpStreamStats } from './tcp-stream.js';
export { StackUdpSocket, type StackDatagram } from './udp-socket.js';
export { DnsResolver, type DnsResolverOptions, type UdpOpener } from './dns-resolver.js';
export { LwipErr, lwipErrName } from './lwip-errors.js';
export { lwipModule as compileLwip } from './wasm-module.js';
