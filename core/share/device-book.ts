import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import { ErrorCodes, GatehopError } from '../common/index.js';
import { bareAddress, unmapIpv4 } from '../reach/index.js';

/** A device the shared listener knows: its name, its generated password, where it enrolled from. */
export interface ShareDevice {
  /** Its user name on the proxy (generated, lower-case letters and digits). */
  readonly id: string;
  /** What the user called it ("Mum's phone"). */
  readonly name: string;
  /** Its generated password (random, 144 bits), also the key in its page's address. */
  readonly secret: string;
  readonly createdAt: number;
  /** The LAN address it is admitted from without a password (its stock Wi-Fi proxy), and until when. */
  enrolledAddress: string | null;
  enrolledUntil: number | null;
}

/** Where devices are kept between runs (the app hands the store's; tests a map). */
export interface DeviceKeeper {
  load(): ShareDevice[];
  save(device: ShareDevice): void;
  remove(id: string): void;
}

/**
 * How long an address stays admitted after the device's page (or its PAC) was fetched from it, and
 * after each connection from it: a day, renewed while in use. A phone that rejoins the Wi-Fi fetches
 * its PAC again and is enrolled anew.
 */
export const ENROL_MS = 24 * 3600_000;
/** A renewal is written to the keeper at most this often (every connection renews it in memory). */
const PERSIST_RENEWAL_MS = 10 * 60_000;
/** Devices one computer shares with: a household, with room. */
export const MAX_DEVICES = 64;
const NAME_MAX = 64;

/**
 * The devices a shared listener admits (#63): each has a generated password (checked in constant
 * time: a random 144-bit secret needs no slow hash, and a guess costs a sha256, so a storm of them
 * is bounded by the network, not by this machine's cores), and at most one LAN address it is
 * admitted from without a password, for phones whose stock proxy settings cannot send one. An
 * address belongs to one device at a time: enrolling moves it.
 */
export class DeviceBook {
  readonly #devices = new Map<string, ShareDevice>();
  readonly #bySecret = new Map<string, ShareDevice>();
  readonly #byAddress = new Map<string, ShareDevice>();
  readonly #persistedAt = new Map<string, number>();
  /** Compared against when a name is unknown, so a check costs the same either way. */
  readonly #dummy = digest(randomBytes(18).toString('base64url'));
  readonly #listeners = new Set<(device: ShareDevice) => void>();

  constructor(
    private readonly keeper: DeviceKeeper | null,
    private readonly now: () => number = Date.now,
  ) {
    for (const d of keeper?.load() ?? []) this.#index(d);
  }

  list(): ShareDevice[] {
    return [...this.#devices.values()].sort((a, b) => a.createdAt - b.createdAt);
  }

  get(id: string): ShareDevice | null {
    return this.#devices.get(id) ?? null;
  }

  /** A new device with a fresh user name and password. */
  add(name: string): ShareDevice {
    const clean = name.trim().replace(/\s+/g, ' ');
    if (
      clean === '' ||
      clean.length > NAME_MAX ||
      [...clean].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f)
    )
      throw new GatehopError(
        ErrorCodes.SHARE_DEVICE_INVALID,
        `a device's name is 1 to ${NAME_MAX} printable characters`,
      );
    if (this.#devices.size >= MAX_DEVICES)
      throw new GatehopError(ErrorCodes.SHARE_DEVICE_INVALID, `at most ${MAX_DEVICES} devices can be shared with`);
    let id: string;
    do id = randomId();
    while (this.#devices.has(id));
    const device: ShareDevice = {
      id,
      name: clean,
      secret: randomBytes(18).toString('base64url'),
      createdAt: this.now(),
      enrolledAddress: null,
      enrolledUntil: null,
    };
    this.#index(device);
    this.keeper?.save(device);
    return device;
  }

  /** Forgets a device: its password and address stop working now; `onRevoked` listeners cut its sessions. */
  revoke(id: string): boolean {
    const d = this.#devices.get(id);
    if (!d) return false;
    this.#devices.delete(id);
    this.#bySecret.delete(d.secret);
    if (d.enrolledAddress !== null && this.#byAddress.get(d.enrolledAddress) === d)
      this.#byAddress.delete(d.enrolledAddress);
    this.#persistedAt.delete(id);
    this.keeper?.remove(id);
    for (const fn of this.#listeners) fn(d);
    return true;
  }

  onRevoked(fn: (device: ShareDevice) => void): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }

  /** The device whose page key this is (null: none). */
  bySecret(secret: string): ShareDevice | null {
    return this.#bySecret.get(secret) ?? null;
  }

  /**
   * Admits `address` as `device` without a password for ENROL_MS: its page or PAC was fetched from
   * there with its key. Another device admitted from that address loses it.
   */
  enrol(device: ShareDevice, address: string): void {
    const at = normalAddress(address);
    if (at === null || this.#devices.get(device.id) !== device) return;
    const previous = this.#byAddress.get(at);
    if (previous && previous !== device) this.#unenrol(previous);
    if (device.enrolledAddress !== null && device.enrolledAddress !== at)
      this.#byAddress.delete(device.enrolledAddress);
    device.enrolledAddress = at;
    device.enrolledUntil = this.now() + ENROL_MS;
    this.#byAddress.set(at, device);
    this.#persist(device, true);
  }

  /** Ends a device's admission by address (it keeps its password). */
  unenrol(id: string): void {
    const d = this.#devices.get(id);
    if (d) this.#unenrol(d);
  }

  /** The device admitted from `address` now (renewing it), or null. */
  admitted(address: string): string | null {
    const at = normalAddress(address);
    if (at === null) return null;
    const d = this.#byAddress.get(at);
    if (!d) return null;
    const now = this.now();
    if ((d.enrolledUntil ?? 0) <= now) {
      this.#unenrol(d);
      return null;
    }
    d.enrolledUntil = now + ENROL_MS;
    this.#persist(d, false);
    return d.id;
  }

  /** Whether `password` is device `username`'s, in the same time whether the name exists or not. */
  verify(username: string, password: string): Promise<boolean> {
    const d = this.#devices.get(username);
    const given = digest(password);
    const ok = timingSafeEqual(given, d ? digest(d.secret) : this.#dummy);
    return Promise.resolve(ok && d !== undefined);
  }

  #unenrol(d: ShareDevice): void {
    if (d.enrolledAddress !== null && this.#byAddress.get(d.enrolledAddress) === d)
      this.#byAddress.delete(d.enrolledAddress);
    d.enrolledAddress = null;
    d.enrolledUntil = null;
    this.#persist(d, true);
  }

  #persist(d: ShareDevice, now: boolean): void {
    if (!this.keeper || !this.#devices.has(d.id)) return;
    const last = this.#persistedAt.get(d.id) ?? 0;
    if (!now && this.now() - last < PERSIST_RENEWAL_MS) return;
    this.#persistedAt.set(d.id, this.now());
    this.keeper.save(d);
  }

  #index(d: ShareDevice): void {
    this.#devices.set(d.id, d);
    this.#bySecret.set(d.secret, d);
    if (d.enrolledAddress !== null && (d.enrolledUntil ?? 0) > this.now()) this.#byAddress.set(d.enrolledAddress, d);
  }
}

function digest(s: string): Buffer {
  return createHash('sha256').update(s, 'utf8').digest();
}

/** Eight letters and digits, starting with a letter (a user name any app's form takes). */
function randomId(): string {
  const alphabet = 'abcdefghijkmnpqrstuvwxyz23456789';
  const bytes = randomBytes(8);
  let id = 'd';
  for (let i = 1; i < 8; i++) id += alphabet[bytes[i]! % alphabet.length];
  return id;
}

/** An address as sockets report it, IPv4-mapped unwrapped and any zone dropped; null if not an address. */
export function normalAddress(address: string): string | null {
  const a = unmapIpv4(bareAddress(address));
  return isIP(a) === 0 ? null : a.toLowerCase();
}
