export {
  NetworkProfiles,
  type NetworkProfilesOptions,
  type NetworkSeen,
  type ProfileEvent,
  type ProfilesState,
  type ProfileTarget,
} from './network-profiles.js';
export { profileFor } from './profile-for.js';
export {
  profileChoicesSchema,
  MAX_PROFILES,
  MAX_PROFILE_NAME,
  type ChoicesInForce,
  type NetworkProfile,
  type ProfileChoices,
} from './profile.js';
