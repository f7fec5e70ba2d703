// Copies non-TypeScript runtime files next to the compiled JavaScript in dist/.
import { cpSync, mkdirSync } from 'node:fs';

for (const file of ['core/netstack/lwip/lwip.wasm', 'core/netstack/lwip/lwip-gateway.wasm']) {
  mkdirSync(`dist/${file.slice(0, file.lastIndexOf('/'))}`, { recursive: true });
  cpSync(file, `dist/${file}`);
}
