import type { OpName } from '../core/api/contract.js';

/** Channel names come from the contract's operation names: nobody writes one by hand. */
export const channelOf = (name: OpName): string => `gatehop:${name}`;
export const EVENT_CHANNEL = 'gatehop:event';
