export { parseProfile, type OvpnProfile, type OvpnRemote, type OvpnProto } from './profile.js';
