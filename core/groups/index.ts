export { groupOptions, groupOptionsSchema, type GroupOptions } from './options.js';
export { GROUP_NAME, SelectionState, type SelectionStore } from './selection.js';
export {
  SwitchController,
  type ControllerEvent,
  type NodeTunnel,
  type OpenTunnel,
  type NodeVerdicts,
  type SwitchControllerDeps,
  type SwitchKind,
  type SwitchRecord,
  type SwitchState,
} from './switch-controller.js';
export {
  LESSON_TTL_MS,
  ProtocolChoice,
  type NodeProtocolRecord,
  type ProtocolChoiceOptions,
  type ProtocolFailure,
  type ProtocolLearned,
  type ProtocolLesson,
  type ProtocolMemory,
} from './protocol-choice.js';
export type { NodeOpener, OpenOptions, Held } from './types.js';
export {
  PoolRecovery,
  recoveryOptionsSchema,
  type PoolRecoveryDeps,
  type RecoveryOptions,
  type RecoveryStatus,
  type StarvedReason,
} from './pool-recovery.js';
export { DelaySweep, type DelaySweepDeps, type SweepProgress } from './delay-sweep.js';
export { pickMemberCandidate } from './balance-members.js';
