import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { Rig } from '../../test/rig/rig.js';
import { openTunnel } from '../../core/egress/index.js';
import { createLogger } from '../../core/common/index.js';
const rig = await Rig.up({ nodes: 1, openvpn: ['gcm-udp'], bigMib: 32 });
const logger = createLogger({ level: 'info', file: null, pretty: false });
try {
  for (const threads of [true, false, true]) {
    for (const n of rig.state.nodes) {
      const t0 = Date.now();
      const t = await openTunnel({ id: `s-${n.name}`, nodeId: n.name, profileText: readFileSync(n.profiles.udp ?? n.profiles.tcp!, "utf8"), logger, threads });
      const opened = Date.now() - t0;
      const c = await t.connectTcp('files.test', 80);
      const h = createHash('sha256'); let bytes = 0; let head = Buffer.alloc(0); let inBody = false;
      const t1 = Date.now();
      await new Promise<void>((res, rej) => {
        c.stream.on('data', (d: Buffer) => {
          if (!inBody) { head = Buffer.concat([head, d]); const i = head.indexOf('\r\n\r\n'); if (i >= 0) { inBody = true; const b = head.subarray(i + 4); h.update(b); bytes += b.length; } }
          else { h.update(d); bytes += d.length; }
        });
        c.stream.on('end', () => res()); c.stream.on('error', rej); c.stream.on('close', () => res());
        c.stream.write('GET /big HTTP/1.1\r\nHost: files.test\r\nConnection: close\r\n\r\n');
        // no half-close
      });
      const s = (Date.now() - t1) / 1000;
      console.log(threads ? "worker" : "thread", n.name, bytes, head.subarray(0, 200).toString().split("\r\n").slice(0,4).join("|"), `open ${opened} ms`, `${(bytes / 1048576 / s).toFixed(1)} MiB/s`, h.digest('hex') === rig.state.bigSha256 ? 'sha ok' : 'SHA MISMATCH', t.diagnostics?.());
      await t.close();
    }
  }
} finally { await rig.down(); }
