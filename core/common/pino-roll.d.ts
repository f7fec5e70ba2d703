// pino-roll ships no types: the part of its API that logger.ts uses (its README, v4).
declare module 'pino-roll' {
  import type { EventEmitter } from 'node:events';
  import type { DestinationStream } from 'pino';

  /** A SonicBoom underneath: what pino writes to, and its 'error' events. */
  type RollingStream = DestinationStream & EventEmitter;

  interface PinoRollOptions {
    file: string;
    /** 'k', 'm', 'g' suffixes; a bare number is MB. */
    size?: string | number;
    frequency?: 'daily' | 'hourly' | number;
    /** count: old files kept besides the one in use; removeOtherLogFiles: also those of earlier runs. */
    limit?: { count?: number; removeOtherLogFiles?: boolean };
    /** A `current.log` link beside the files, to the one in use. */
    symlink?: boolean;
    mkdir?: boolean;
    sync?: boolean;
  }

  export default function pinoRoll(opts: PinoRollOptions): Promise<RollingStream>;
}
