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
export { FakeIps } from './fake-ips.js';
export { answerQuery } from './dns-answer.js';
export { tunGroupId, tunOff } from './tun-mode.js';
export {
  checkSupervisedCore,
  startTunMode,
  supervisorChannel,
  type SupervisorChannel,
  type TunMode,
} from './tun-core.js';
export { superviseTunCore, tunUser } from './tun-supervisor.js';
