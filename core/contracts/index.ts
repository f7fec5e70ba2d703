export type {
  ConnectTcpOptions,
  Egress,
  EgressState,
  EgressStats,
  EgressLease,
  EgressSource,
  EgressTcpConnection,
  EgressUdpSocket,
  RetireReason,
  UdpDatagram,
} from './egress.js';
export type { ClientConnection } from './client-connection.js';
export type { CaptureInbound, CapturedUdp } from './capture-inbound.js';
export type { HonestyRecordOf } from './honesty-record.js';
export type { FlowRecord, FlowEnd, FlowRoute } from './flow-record.js';
