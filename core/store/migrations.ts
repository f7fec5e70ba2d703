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
];
