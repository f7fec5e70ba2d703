import { z } from 'zod';

/**
 * What a profile may decide on a network: the route mode, HTTPS only, and the order tunnel
 * protocols are tried in. A choice left out keeps whatever is in force.
 */
export const profileChoicesSchema = z
  .object({
    mode: z.enum(['rule', 'global', 'direct']).optional(),
    httpsOnly: z.boolean().optional(),
    protocols: z
      .array(z.enum(['openvpn', 'sstp', 'sevpn']))
      .min(1)
      .max(3)
      .refine((a) => new Set(a).size === a.length, 'each protocol at most once')
      .optional(),
  })
  .strict();
export type ProfileChoices = z.infer<typeof profileChoicesSchema>;
/** Every choice, as it is in force now (what a profile changes is taken from here). */
export type ChoicesInForce = Required<ProfileChoices>;
export const CHOICE_KEYS = ['mode', 'httpsOnly', 'protocols'] as const satisfies ReadonlyArray<keyof ProfileChoices>;

/** How many profiles are kept (a user names a handful; the file stays small whatever arrives). */
export const MAX_PROFILES = 100;
export const MAX_PROFILE_NAME = 64;

export const networkProfileSchema = z.object({
  /** The network's key (core/common networkKeyOf): what the profile is for. */
  network: z.string().min(1).max(64),
  /** How the network looked when the profile was saved ("wlan0 192.168.1.x"). */
  label: z.string().max(200),
  name: z.string().trim().min(1).max(MAX_PROFILE_NAME),
  choices: profileChoicesSchema,
  savedAt: z.number(),
});
export type NetworkProfile = z.infer<typeof networkProfileSchema>;

/**
 * A profile in force: the values it replaced (put back on leaving) and the ones it set (a value the
 * user changed since is theirs and stays). Kept in the file, so a stop or a crash on the profile's
 * network does not lose the values to go back to.
 */
export const appliedProfileSchema = z.object({
  network: z.string().min(1).max(64),
  name: z.string().max(MAX_PROFILE_NAME),
  before: profileChoicesSchema,
  set: profileChoicesSchema,
  at: z.number(),
});
export type AppliedProfile = z.infer<typeof appliedProfileSchema>;

export const profilesFileSchema = z.object({
  version: z.literal(1),
  profiles: z.array(networkProfileSchema).max(MAX_PROFILES),
  applied: appliedProfileSchema.nullable(),
});
export type ProfilesFile = z.infer<typeof profilesFileSchema>;

/** Whether two values of one choice are the same (a protocol order compares element by element). */
export function sameChoice(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
