import { ErrorCodes, GatehopError, Listeners, type Logger } from '../common/index.js';
import { readProfilesFile, writeProfilesFile } from './profile-file.js';
import { profileFor } from './profile-for.js';
import {
  CHOICE_KEYS,
  MAX_PROFILES,
  profileChoicesSchema,
  sameChoice,
  type AppliedProfile,
  type ChoicesInForce,
  type NetworkProfile,
  type ProfileChoices,
  type ProfilesFile,
} from './profile.js';

/** Where the choices a profile makes are read and put in force (the app: the user's saved settings). */
export interface ProfileTarget {
  /** Every choice as it is in force now. */
  read(): ChoicesInForce;
  /** Puts these choices in force (and keeps them, as a change in the window would). */
  apply(choices: ProfileChoices): Promise<void>;
}

/** The network the machine is on: its key (core/common networkKeyOf) and how the user is shown it. */
export interface NetworkSeen {
  key: string;
  label: string;
}

export type ProfileEvent =
  | { type: 'applied'; name: string; network: string; choices: ProfileChoices }
  | { type: 'restored'; name: string; network: string; kept: Array<keyof ProfileChoices> }
  | { type: 'failed'; name: string; network: string; message: string };

export interface ProfilesState {
  /** The network the machine is on now. */
  network: NetworkSeen;
  profiles: NetworkProfile[];
  /** The profile in force, and since when; null: the user's own settings. */
  applied: { network: string; name: string; at: number } | null;
}

export interface NetworkProfilesOptions {
  /** `<data-dir>/network-profiles.json`. */
  file: string;
  target: ProfileTarget;
  network: () => NetworkSeen;
  logger: Logger;
  now?: () => number;
}

/**
 * A profile per network (#64): the user names what should change on a network (the route mode,
 * HTTPS only, the protocol order); when the machine is seen on that network the profile is put in
 * force, and on leaving it the values it replaced come back, except those the user changed while
 * there (theirs now). Which profile applies is profileFor's one rule; when it is looked at again is
 * the caller's (the network watch's events, and a save or a removal here). One change at a time:
 * each waits for the one before, so a quick way there and back ends where the machine is.
 */
export class NetworkProfiles {
  readonly #o: NetworkProfilesOptions;
  readonly #log: Logger;
  readonly #listeners: Listeners<ProfileEvent>;
  readonly #now: () => number;
  #file: ProfilesFile;
  #queue: Promise<unknown> = Promise.resolve();
  #closed = false;

  constructor(o: NetworkProfilesOptions) {
    this.#o = o;
    this.#log = o.logger.child({ component: 'network-profiles' });
    this.#listeners = new Listeners(this.#log, 'network profile');
    this.#now = o.now ?? Date.now;
    this.#file = readProfilesFile(o.file, this.#log);
  }

  state(): ProfilesState {
    const a = this.#file.applied;
    return {
      network: this.#o.network(),
      profiles: this.#file.profiles.map((p) => ({ ...p, choices: { ...p.choices } })),
      applied: a ? { network: a.network, name: a.name, at: a.at } : null,
    };
  }

  onEvent(fn: (e: ProfileEvent) => void): () => void {
    return this.#listeners.add(fn);
  }

  /** The network may have changed: puts its profile in force, or the user's own settings back. */
  networkChanged(): Promise<void> {
    return this.#serial(() => this.#settle(false));
  }

  /** Saves `name` and `choices` as the profile of the network the machine is on now, in force at once. */
  save(name: string, choices: ProfileChoices): Promise<ProfilesState> {
    return this.#serial(async () => {
      const here = this.#o.network();
      if (here.key === 'offline')
        throw new GatehopError(
          ErrorCodes.NETWORK_PROFILE_INVALID,
          'this computer is on no network now: a profile is saved on the network it is for',
        );
      const parsed = profileChoicesSchema.safeParse(choices);
      const trimmed = name.trim();
      if (!parsed.success || trimmed.length === 0 || trimmed.length > 64)
        throw new GatehopError(
          ErrorCodes.NETWORK_PROFILE_INVALID,
          parsed.success
            ? 'a profile needs a name of 1 to 64 characters'
            : `${parsed.error.issues[0]!.path.join('.')}: ${parsed.error.issues[0]!.message}`,
        );
      if (Object.keys(parsed.data).length === 0)
        throw new GatehopError(ErrorCodes.NETWORK_PROFILE_INVALID, 'a profile changes at least one thing');
      const others = this.#file.profiles.filter((p) => p.network !== here.key);
      if (others.length >= MAX_PROFILES)
        throw new GatehopError(ErrorCodes.NETWORK_PROFILE_INVALID, `at most ${MAX_PROFILES} networks have a profile`);
      const profile: NetworkProfile = {
        network: here.key,
        label: here.label,
        name: trimmed,
        choices: parsed.data,
        savedAt: this.#now(),
      };
      this.#write({ ...this.#file, profiles: [...others, profile] });
      this.#log.info(
        { event: 'profile-saved', name: trimmed, network: here.label },
        `profile "${trimmed}" saved for ${here.label}`,
      );
      // A changed profile of the network in force is put back and applied again, without a word.
      await this.#settle(true);
      return this.state();
    });
  }

  /** Forgets the profile of `network`; in force, the user's own settings come back first. */
  remove(network: string): Promise<ProfilesState | null> {
    return this.#serial(async () => {
      if (!this.#file.profiles.some((p) => p.network === network)) return null;
      this.#write({ ...this.#file, profiles: this.#file.profiles.filter((p) => p.network !== network) });
      await this.#settle(false);
      return this.state();
    });
  }

  /** No more changes; one under way finishes. */
  close(): Promise<void> {
    this.#closed = true;
    return this.#queue.then(
      () => undefined,
      () => undefined,
    );
  }

  #serial<T>(work: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(work, work);
    this.#queue = run.catch(() => undefined);
    return run;
  }

  /** Makes what is in force agree with the rule: put back what no longer applies, apply what does. */
  async #settle(quiet: boolean): Promise<void> {
    if (this.#closed) return;
    const here = this.#o.network();
    // Offline is between networks: what is in force stays until the next one is seen.
    if (here.key === 'offline') return;
    const want = profileFor(this.#file.profiles, here.key);
    const applied = this.#file.applied;
    if (applied && want && applied.network === want.network && sameChoice(applied.set, want.choices)) return;
    const edited = !!applied && !!want && applied.network === want.network;
    if (applied) await this.#restore(applied, quiet || edited);
    if (want) await this.#apply(want, here, quiet && edited);
  }

  async #apply(p: NetworkProfile, here: NetworkSeen, quiet: boolean): Promise<void> {
    const now = this.#o.target.read();
    const before: ProfileChoices = {};
    for (const k of CHOICE_KEYS) if (p.choices[k] !== undefined) Object.assign(before, { [k]: now[k] });
    // Written before the change: a stop or a crash from here on still knows what to put back.
    const applied: AppliedProfile = { network: p.network, name: p.name, before, set: p.choices, at: this.#now() };
    this.#write({ ...this.#file, applied });
    try {
      await this.#o.target.apply(p.choices);
    } catch (err) {
      this.#write({ ...this.#file, applied: null });
      const message = (err as Error).message;
      this.#log.warn(
        { event: 'profile-failed', name: p.name, network: here.label, err: message },
        `profile "${p.name}" could not be applied on ${here.label}: ${message}`,
      );
      this.#listeners.emit({ type: 'failed', name: p.name, network: here.label, message });
      return;
    }
    this.#log.info(
      { event: 'profile-applied', name: p.name, network: here.label, choices: p.choices },
      `on ${here.label}: profile "${p.name}" applied`,
    );
    if (!quiet) this.#listeners.emit({ type: 'applied', name: p.name, network: here.label, choices: { ...p.choices } });
  }

  async #restore(a: AppliedProfile, quiet: boolean): Promise<void> {
    const now = this.#o.target.read();
    const back: ProfileChoices = {};
    const kept: Array<keyof ProfileChoices> = [];
    for (const k of CHOICE_KEYS) {
      if (a.set[k] === undefined) continue;
      // The user changed it while the profile was in force: their choice stands.
      if (sameChoice(now[k], a.set[k])) Object.assign(back, { [k]: a.before[k] });
      else kept.push(k);
    }
    const label = this.#file.profiles.find((p) => p.network === a.network)?.label ?? a.network;
    try {
      if (Object.keys(back).length > 0) await this.#o.target.apply(back);
    } catch (err) {
      // Left as it is, and said: the profile's values stay in force, the record of what to put back too.
      const message = (err as Error).message;
      this.#log.warn(
        { event: 'profile-restore-failed', name: a.name, err: message },
        `the settings before profile "${a.name}" could not be put back: ${message}`,
      );
      this.#listeners.emit({ type: 'failed', name: a.name, network: label, message });
      throw err;
    }
    this.#write({ ...this.#file, applied: null });
    this.#log.info(
      { event: 'profile-restored', name: a.name, kept },
      `left the network of profile "${a.name}": the settings before it are back${kept.length ? ` (kept as changed: ${kept.join(', ')})` : ''}`,
    );
    if (!quiet) this.#listeners.emit({ type: 'restored', name: a.name, network: label, kept });
  }

  #write(next: ProfilesFile): void {
    writeProfilesFile(this.#o.file, next);
    this.#file = next;
  }
}
