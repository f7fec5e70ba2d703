/**
 * "Share with this network" (#63): the switch, this computer's LAN addresses, the devices and what
 * the firewall does with the port, as the window and `gatehop share` read them. No Node imports.
 */
import { z } from 'zod';

export const sharedDeviceSchema = z.object({
  id: z.string(),
  name: z.string(),
  createdAt: z.number(),
  /** The LAN address it is admitted from without a password (its stock Wi-Fi proxy), and until when. */
  enrolledAddress: z.string().nullable(),
  enrolledUntil: z.number().nullable(),
  sessionsActive: z.number().int(),
  sessionsTotal: z.number().int(),
  bytesUp: z.number(),
  bytesDown: z.number(),
  /** Its page on this computer's first LAN address (what its QR code holds); null while not listening. */
  pageUrl: z.string().nullable(),
  /** socks5://user:password@address:port for apps; null while not listening. */
  proxyUrl: z.string().nullable(),
});
export type SharedDevice = z.infer<typeof sharedDeviceSchema>;
export const shareStateSchema = z.object({
  enabled: z.boolean(),
  port: z.number().int(),
  listening: z.boolean(),
  /** Why the listener could not start (the port in use), else null. */
  error: z.string().nullable(),
  addresses: z.array(z.object({ address: z.string(), interface: z.string(), cidr: z.string() })),
  devices: z.array(sharedDeviceSchema),
  /** What the firewall does with the port (Linux: ufw, firewalld or the nftables ruleset); null while not listening. */
  firewall: z
    .object({
      tool: z.enum(['nftables', 'ufw', 'firewalld']).nullable(),
      state: z.enum(['open', 'blocked', 'unknown']),
      detail: z.string(),
      /** Where it blocks: the commands that let the port in from this network (what "Allow" runs); else null. */
      opening: z.array(z.string()).nullable(),
    })
    .nullable(),
});
export type ShareState = z.infer<typeof shareStateSchema>;
