/** Schema versions, applied in order inside one transaction each; `user_version` records the last. */
export const MIGRATIONS: readonly string[] = [
  // v1: the first schema.
  `CREATE TABLE node_list (
     id INTEGER PRIMARY KEY CHECK (id = 1),
     fetched_at INTEGER NOT NULL,
     source TEXT NOT NULL,
     nodes_json TEXT NOT NULL
   );
   CREATE TABLE nodes (
     id TEXT PRIMARY KEY,
     first_seen INTEGER NOT NULL,
     last_seen INTEGER NOT NULL
   );
   CREATE TABLE node_history (
     node_id TEXT PRIMARY KEY,
     successes INTEGER NOT NULL DEFAULT 0,
     failures INTEGER NOT NULL DEFAULT 0,
     consecutive_failures INTEGER NOT NULL DEFAULT 0,
     last_success_at INTEGER,
     last_failure_at INTEGER,
     backoff_until INTEGER,
     avg_throughput_bps REAL,
     avg_connect_ms REAL
   );
   CREATE TABLE latency_samples (
     node_id TEXT NOT NULL,
     at INTEGER NOT NULL,
     kind TEXT NOT NULL CHECK (kind IN ('tcp', 'url', 'dns')),
     ms REAL,
     success INTEGER NOT NULL
   );
   CREATE TABLE selection (
     grp TEXT PRIMARY KEY,
     node_id TEXT,
     mode TEXT NOT NULL CHECK (mode IN ('auto', 'manual'))
   );
   CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);`,
  // v2: the chart reads samples by node and time; the desktop app restores the OS proxy from here.
  `CREATE INDEX latency_by_node_time ON latency_samples (node_id, at);
   CREATE TABLE system_proxy_snapshot (
     id INTEGER PRIMARY KEY CHECK (id = 1),
     saved_at INTEGER NOT NULL,
     data_json TEXT NOT NULL
   );`,
  // v3: the pool that remembers (every node listed within vpngate.keepDays, with its profile) and the
  // list sources with how each last went (mirrors found on directory pages among them). The latest
  // list keeps only its metadata; its nodes live in the pool, seeded here from the v2 cache.
  `ALTER TABLE nodes ADD COLUMN node_json TEXT;
   CREATE INDEX nodes_by_last_seen ON nodes (last_seen);
   UPDATE nodes SET node_json = (
     SELECT j.value FROM node_list, json_each(node_list.nodes_json) AS j WHERE json_extract(j.value, '$.id') = nodes.id
   );
   ALTER TABLE node_list ADD COLUMN via TEXT NOT NULL DEFAULT 'direct';
   ALTER TABLE node_list ADD COLUMN node_count INTEGER NOT NULL DEFAULT 0;
   UPDATE node_list SET node_count = json_array_length(nodes_json), nodes_json = '[]';
   CREATE TABLE list_sources (
     url TEXT PRIMARY KEY,
     kind TEXT NOT NULL CHECK (kind IN ('official', 'api', 'mirror', 'user')),
     found_at INTEGER NOT NULL,
     found_from TEXT,
     last_ok_at INTEGER,
     last_fail_at INTEGER,
     last_error TEXT,
     last_via TEXT,
     last_nodes INTEGER
   );`,
  // v4: each node's honesty verdict (core/honesty) with its evidence, forgotten with the node.
  `CREATE TABLE node_honesty (
     node_id TEXT PRIMARY KEY,
     verdict TEXT NOT NULL,
     evidence_json TEXT NOT NULL,
     inconclusive_json TEXT NOT NULL,
     checked_at INTEGER NOT NULL,
     duration_ms INTEGER NOT NULL,
     bytes INTEGER NOT NULL,
     accepted INTEGER NOT NULL DEFAULT 0
   );`,
  // v5: clean checks in a row since a tampering verdict (#59: one no longer clears it).
  `ALTER TABLE node_honesty ADD COLUMN clean_checks INTEGER NOT NULL DEFAULT 0;`,
  // v6: why automatic selection left a node in use, and until when it stays away (#60).
  `ALTER TABLE node_history ADD COLUMN left_shape TEXT;
   ALTER TABLE node_history ADD COLUMN left_at INTEGER;
   ALTER TABLE node_history ADD COLUMN left_until INTEGER;`,
  // v7: the devices "Share with this network" admits (#63): each one's generated password, and the
  // LAN address it is admitted from without one, until when.
  `CREATE TABLE share_devices (
     id TEXT PRIMARY KEY,
     name TEXT NOT NULL,
     secret TEXT NOT NULL,
     created_at INTEGER NOT NULL,
     enrolled_address TEXT,
     enrolled_until INTEGER
   );`,
  // v8: where the bytes went (#64): per local day, network, node, route, rule, program and device,
  // with each network's label; and the closed connections, kept here only when the user says so.
  `CREATE TABLE traffic_days (
     day TEXT NOT NULL,
     network TEXT NOT NULL,
     node TEXT NOT NULL,
     route TEXT NOT NULL,
     rule TEXT NOT NULL,
     program TEXT NOT NULL,
     device TEXT NOT NULL,
     bytes_up INTEGER NOT NULL,
     bytes_down INTEGER NOT NULL,
     flows INTEGER NOT NULL,
     PRIMARY KEY (day, network, node, route, rule, program, device)
   ) WITHOUT ROWID;
   CREATE TABLE traffic_networks (
     key TEXT PRIMARY KEY,
     label TEXT NOT NULL,
     first_seen INTEGER NOT NULL,
     last_seen INTEGER NOT NULL
   );
   CREATE TABLE closed_flows (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     ended_at INTEGER NOT NULL,
     record_json TEXT NOT NULL
   );`,
];
