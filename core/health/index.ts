export { healthOptions, healthOptionsSchema, type HealthOptions } from './options.js';
export {
  countersOf,
  diffCounters,
  scoreWindow,
  failureShapeOf,
  type FailureShape,
  type HealthCounters,
  type HealthSource,
  type WindowSample,
  type WindowScore,
  type Symptom,
} from './window-score.js';
export { HealthMonitor, type HealthMonitorEvents } from './health-monitor.js';
export { SwitchPolicy, type Verdict } from './switch-policy.js';
