// Tunnels run in worker threads by default; from TypeScript source they need a bundled worker.
import { ensureTunnelWorkerBundle } from '../helpers/tunnel-worker-bundle.js';

await ensureTunnelWorkerBundle();
