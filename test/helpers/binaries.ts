// Finding the programs some suites run (nginx, kubectl, redis-server …), from PATH or the system
// folders Debian installs them to; a suite without its program is skipped, saying which is missing.
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

export function findBinary(name: string): string | null {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/usr/bin'].filter(
    (d) => d !== '',
  );
  for (const dir of dirs) {
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {
      // Not in this folder: try the next.
    }
  }
  return null;
}
