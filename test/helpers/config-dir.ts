// A config folder written for one test: the shipped regions, and the profiles and routing given.
import { copyFileSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function writeConfigDir(
  profiles: Record<string, Record<string, unknown>>,
  numbers: { default: string; routes?: Record<string, string> } = { default: Object.keys(profiles)[0]! },
): string {
  const dir = mkdtempSync(join(tmpdir(), 'callbridge-config-'));
  mkdirSync(join(dir, 'agents'));
  copyFileSync(join(import.meta.dirname, '../../config/regions.json'), join(dir, 'regions.json'));
  for (const [name, profile] of Object.entries(profiles)) {
    writeFileSync(join(dir, 'agents', `${name}.json`), JSON.stringify(profile));
  }
  writeFileSync(join(dir, 'numbers.json'), JSON.stringify({ routes: {}, ...numbers }));
  return dir;
}
