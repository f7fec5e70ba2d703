/** The stack's public types, and the events lwIP hands it (stack.ts, lwip-imports.ts). */

export interface StackOptions {
  /** The tunnel's address, netmask (dotted or prefix length), gateway and MTU (a raw-IP link). */
  address?: string;
  netmask?: string | number;
  gateway?: string;
  mtu: number;
  /**
   * An Ethernet link instead (an SE-VPN hub port): this MAC, lwIP's own ARP, and the address from
   * its DHCP client (renewed at half the lease); onLease tells each new address or loss.
   */
  ethernet?: { mac: Buffer };
  /** Receives every IP packet (an Ethernet frame on an Ethernet link) the stack sends; called after lwIP returns, never from inside it. */
  output: (packet: Buffer) => void;
  /** Checksums on by default; only in-process links whose both ends are ours may turn them off. */
  checksums?: boolean;
  /** New connections past this fail with GH_ERR_NETSTACK_LIMIT; existing ones are unaffected. */
  maxConnections?: number;
  /**
   * When received data is acknowledged: 'each-segment' (default) at once, for senders that clock
   * on ACKs with a small window (SoftEther's SecureNAT); 'delayed', lwIP's every second segment or
   * on its timer; 'per-batch', in-order data of each batch of input acked once, after its readers
   * took it, so no segment waits for the timer; 'per-turn', as 'per-batch' but once at the end of
   * the event loop's turn, after every batch read in it (a TLS carrier hands over one record a
   * batch, several a turn, and each ACK costs it a record and a write).
   */
  acks?: 'each-segment' | 'delayed' | 'per-batch' | 'per-turn';
  /**
   * The capture gateway's build (core/capture): every address is this stack's, and its one TCP
   * listener takes a SYN to any address and port; each stream's local end is what the program
   * dialled. Raw IP only.
   */
  captureGateway?: boolean;
}

/** What DHCP gave an Ethernet link (dns: the servers it named, else the gateway). */
export interface StackLease {
  address: string;
  netmask: string;
  gateway: string;
  dns: string[];
}

export interface StackStats {
  packetsIn: number;
  packetsOut: number;
  bytesIn: number;
  bytesOut: number;
  /** Input packets refused before lwIP saw them (empty, oversized, out of memory). */
  inputDropped: number;
  ip: { xmit: number; recv: number; drop: number; chkerr: number; lenerr: number };
  tcp: {
    xmit: number;
    recv: number;
    drop: number;
    retransmissions: number;
    chkerr: number;
    active: number;
    /** Window updates announced again to a sender that stayed silent after the window reopened (glue.c). */
    windowUpdatesResent: number;
  };
  udp: { xmit: number; recv: number; drop: number };
  icmp: { xmit: number; recv: number };
  connections: number;
  udpSockets: number;
  wasmMemoryBytes: number;
  /** What lwIP's allocator has taken from that memory (a high-water mark: it never shrinks). */
  heapBytes: number;
}

export interface ConnectOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** What lwIP reported during a call, queued until the outermost call returns. */
export type StackEvent =
  | { t: 'connected'; id: number }
  | { t: 'data'; id: number; data: Buffer }
  | { t: 'fin'; id: number }
  | { t: 'sent'; id: number }
  | { t: 'err'; id: number; err: number }
  | { t: 'poll'; id: number }
  | { t: 'udp'; id: number; data: Buffer; address: string; port: number }
  | { t: 'icmp'; address: string; ident: number; seq: number }
  | {
      t: 'accepted';
      listenerId: number;
      id: number;
      pcb: number;
      address: string;
      port: number;
      localAddress: string;
      localPort: number;
    }
  | { t: 'lease'; lease: StackLease | null };
