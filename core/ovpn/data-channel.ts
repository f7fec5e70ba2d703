import { dataEngineStatus, loadNative, type DataEngine, type NativeModule } from '../common/index.js';
import {
  CIPHERS,
  keyMaterial,
  SUPPORTED_CIPHERS,
  type DataCipher,
  type OpenDrop,
  type SealedBatch,
} from './data-cipher.js';
import { JsDataCipher } from './data-cipher-js.js';
import { NativeDataCipher } from './data-cipher-native.js';
import type { DirectionalKeys } from './keys.js';

export { dataEngineStatus, SUPPORTED_CIPHERS, type DataEngine, type SealedBatch, type OpenDrop };

/** The 16-byte keepalive payload (notes §6.5): sent as data, dropped on receipt. */
export const PING_PAYLOAD = Buffer.from('2a187bf3641eb4cb07ed2d0a981fc748', 'hex');

export function isSupportedCipher(name: string): boolean {
  return name.toUpperCase() in CIPHERS;
}

export interface DataChannelStats {
  sent: number;
  received: number;
  decryptFailures: number;
  replays: number;
}

function nativeForData(): NativeModule | null {
  return dataEngineStatus().engine === 'native' ? loadNative() : null;
}

/**
 * One key's data channel (notes §6): CBC + HMAC (encrypt-then-MAC over IV‖ciphertext) or AEAD
 * (tag before ciphertext, nonce = packet id ‖ implicit IV), P_DATA_V1 or V2, packet ids from 1, a
 * 64-wide replay window. Packets move in batches (sealBatch/openBatch); encrypt/decrypt are the
 * one-packet forms for pings and tests.
 */
export class DataChannel {
  readonly stats: DataChannelStats = { sent: 0, received: 0, decryptFailures: 0, replays: 0 };
  readonly #cipher: DataCipher;

  /** engine: which one to use (tests run both); by default native where it runs, else JavaScript. */
  constructor(
    cipher: string,
    auth: string | null,
    keys: DirectionalKeys,
    keyId: number,
    peerId: number | null,
    engine?: DataEngine,
  ) {
    const material = keyMaterial(cipher, auth, keys, keyId, peerId);
    const native = engine === 'javascript' ? null : engine === 'native' ? loadNative() : nativeForData();
    if (engine === 'native' && !native) throw new Error('the native data engine is not available');
    this.#cipher = native ? new NativeDataCipher(native, material) : new JsDataCipher(material);
  }

  get engine(): DataEngine {
    return this.#cipher.engine;
  }

  /** Every payload sealed, end to end in one buffer ([u16 length] record headers for TCP). */
  sealBatch(payloads: readonly Buffer[], tcpFraming: boolean): SealedBatch {
    const sealed = this.#cipher.seal(payloads, tcpFraming);
    this.stats.sent += sealed.count;
    return sealed;
  }

  /**
   * Each packet's payload, or null when it failed authentication, was malformed or replayed
   * (counted). The native engine decrypts in place: the packets' bytes are the payloads' afterwards.
   */
  openBatch(packets: readonly Buffer[]): Array<Buffer | null> {
    // The engine's array, drops turned into null where they stand (no second array per batch).
    const results = this.#cipher.open(packets) as Array<Buffer | OpenDrop | null>;
    for (let i = 0; i < results.length; i++) {
      const r = results[i];
      if (r === 'failed') this.stats.decryptFailures++;
      else if (r === 'replay') this.stats.replays++;
      else {
        this.stats.received++;
        continue;
      }
      results[i] = null;
    }
    return results as Array<Buffer | null>;
  }

  encrypt(payload: Buffer): Buffer {
    const sealed = this.sealBatch([payload], false);
    return sealed.data.subarray(0, sealed.bytes);
  }

  /** The payload, or null when the packet fails authentication, is malformed or replayed (counted); packet is left as it was. */
  decrypt(packet: Buffer): Buffer | null {
    return this.openBatch([Buffer.from(packet)])[0]!;
  }
}
