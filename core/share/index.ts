export {
  ShareService,
  type ShareServiceOptions,
  type ShareView,
  type SharedDeviceView,
  type ShareLimits,
} from './share-service.js';
export { DeviceBook, ENROL_MS, MAX_DEVICES, type DeviceKeeper, type ShareDevice } from './device-book.js';
export { lanAddresses, type LanAddress } from './lan-addresses.js';
export { phoneLang, PHONE_TEXT, type PhoneLang } from './phone-text.js';
export { clashProfile } from './phone-page.js';
export {
  firewallState,
  judgeRuleset,
  openingCommands,
  runToEnd,
  type FirewallState,
  type RunCommand,
} from './firewall.js';
