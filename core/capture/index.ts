export {
  CaptureServer,
  GATEWAY_ADDRESS,
  TUN_ADDRESS,
  TUN_MODE_ADDRESS,
  TUN_MODE_GATEWAY,
  CAPTURE_MTU,
  type CaptureSessionInfo,
  type CaptureTicket,
} from './capture-server.js';
export { Gateway, type GatewayStats } from './gateway.js';
export type { CaptureInbound, CapturedUdp } from './capture-inbound.js';
export { FakeIps } from './fake-ips.js';
export { answerQuery } from './dns-answer.js';
