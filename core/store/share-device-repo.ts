import type { DbAccess } from './sql.js';
import type { StoredShareDevice } from './types.js';

interface ShareDeviceRow {
  id: string;
  name: string;
  secret: string;
  created_at: number;
  enrolled_address: string | null;
  enrolled_until: number | null;
}

/** The devices the shared listener admits (core/share owns what they mean; this keeps them). */
export class ShareDeviceRepo {
  constructor(private readonly db: DbAccess) {}

  shareDevices(): StoredShareDevice[] {
    const rows = this.db.read(
      'read shared devices',
      (q) => q.all<ShareDeviceRow>('SELECT * FROM share_devices ORDER BY created_at'),
      [],
    );
    return rows.map((r) => ({
      id: r.id,
      name: r.name,
      secret: r.secret,
      createdAt: r.created_at,
      enrolledAddress: r.enrolled_address,
      enrolledUntil: r.enrolled_until,
    }));
  }

  saveShareDevice(d: StoredShareDevice): void {
    this.db.write('save a shared device', (q) =>
      q.run(
        `INSERT INTO share_devices (id, name, secret, created_at, enrolled_address, enrolled_until)
         VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET name = excluded.name, enrolled_address = excluded.enrolled_address,
           enrolled_until = excluded.enrolled_until`,
        d.id,
        d.name,
        d.secret,
        d.createdAt,
        d.enrolledAddress,
        d.enrolledUntil,
      ),
    );
  }

  removeShareDevice(id: string): void {
    this.db.write('remove a shared device', (q) => q.run('DELETE FROM share_devices WHERE id = ?', id));
  }
}
