// Node 20 cannot start a .ts worker; this starts tunnel-download.ts through tsx's loader.
import { tsImport } from 'tsx/esm/api';

await tsImport('./tunnel-download.ts', import.meta.url);
