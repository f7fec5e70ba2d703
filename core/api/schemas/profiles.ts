/**
 * A profile per network (#64): what the window's card and the tray's notification read. The
 * operations live here beside their schemas (contract.ts spreads them in). No Node imports.
 */
import { z } from 'zod';
import { none, op } from '../op-shape.js';
import { protocolOrderSchema } from './common.js';

/** A choice left out keeps what is in force; the bounds are core/profiles' (profile.ts). */
export const profileChoicesViewSchema = z
  .object({
    mode: z.enum(['rule', 'global', 'direct']).optional(),
    httpsOnly: z.boolean().optional(),
    protocols: protocolOrderSchema.optional(),
  })
  .strict();
export type ProfileChoicesView = z.infer<typeof profileChoicesViewSchema>;

export const networkProfileViewSchema = z.object({
  network: z.string(),
  label: z.string(),
  name: z.string(),
  choices: profileChoicesViewSchema,
  savedAt: z.number(),
});
export const profilesStateSchema = z.object({
  /** The network this computer is on now ("offline": none). */
  network: z.object({ key: z.string(), label: z.string() }),
  profiles: z.array(networkProfileViewSchema),
  applied: z.object({ network: z.string(), name: z.string(), at: z.number() }).nullable(),
});
export type ProfilesStateView = z.infer<typeof profilesStateSchema>;

/** A profile went on, came off (the user's settings back, but for those they changed meanwhile), or failed. */
export const profileEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('applied'), name: z.string(), network: z.string(), choices: profileChoicesViewSchema }),
  z.object({
    type: z.literal('restored'),
    name: z.string(),
    network: z.string(),
    kept: z.array(z.enum(['mode', 'httpsOnly', 'protocols'])),
  }),
  z.object({ type: z.literal('failed'), name: z.string(), network: z.string(), message: z.string() }),
]);
export type ProfileEventView = z.infer<typeof profileEventSchema>;

export const profileOps = {
  /** The profiles, the network this computer is on and the profile in force. */
  getProfiles: op({ method: 'GET', path: '/profiles', input: none, output: profilesStateSchema }),
  /** Saves a profile for the network this computer is on now; it is in force at once. */
  saveProfile: op({
    method: 'PUT',
    path: '/profiles/here',
    input: z.object({ name: z.string().trim().min(1).max(64), choices: profileChoicesViewSchema }).strict(),
    output: profilesStateSchema,
  }),
  /** Forgets a network's profile (in force, the user's own settings come back). */
  removeProfile: op({
    method: 'DELETE',
    path: '/profiles/:network',
    input: z.object({ network: z.string().min(1).max(64) }).strict(),
    output: profilesStateSchema,
  }),
} as const;
