// The folder holding package.json, where the bundled assets live, found upward from this module
// (src/ or dist/ alike).
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('cannot find the package root (no package.json above this module)');
    dir = parent;
  }
  return dir;
}
