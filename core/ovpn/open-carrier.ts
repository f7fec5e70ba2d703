import type { Carrier, CarrierOptions } from './carrier.js';
import { openTcpCarrier } from './carrier-tcp.js';
import { openUdpCarrier } from './carrier-udp.js';

/**
 * The carrier for the remote's protocol and the way to it. Beside its caller (the tunnel client),
 * not in carrier.ts, whose types the carriers themselves import.
 */
export function openCarrier(o: CarrierOptions): Promise<Carrier> {
  return o.proto === 'tcp' ? openTcpCarrier(o) : openUdpCarrier(o);
}
