// Every installed package runs on the Node.js version the README promises: `npm ci` on that version
// prints no engine warning (a test tool once wanted Node 22 while the README said 20).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/build.js';

interface Manifest {
  name?: string;
  version?: string;
  engines?: { node?: string };
}

function manifest(dir: string): Manifest {
  return JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;
}

/** Every package under a node_modules folder, nested ones included. */
function installed(modules: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(modules)) {
    if (entry.startsWith('.')) continue;
    const path = join(modules, entry);
    if (entry.startsWith('@')) {
      found.push(...installed(path));
      continue;
    }
    if (!existsSync(join(path, 'package.json'))) continue;
    found.push(path);
    if (existsSync(join(path, 'node_modules'))) found.push(...installed(join(path, 'node_modules')));
  }
  return found;
}

const promised = manifest(ROOT).engines?.node ?? '';
const oldest = semver.minVersion(promised)?.version ?? '';

describe('Node.js version', () => {
  it('the README states the version package.json promises', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    expect(promised).toBe('>=20.19');
    expect(readme).toContain(`Node.js ${semver.major(oldest)}.${semver.minor(oldest)} or later`);
  });

  it('no installed package asks for a newer Node.js than the oldest one promised', () => {
    const packages = installed(join(ROOT, 'node_modules'));
    expect(packages.length).toBeGreaterThan(100);
    const refusing = packages
      .map(manifest)
      .filter((pkg) => pkg.engines?.node !== undefined && !semver.satisfies(oldest, pkg.engines.node))
      .map((pkg) => `${pkg.name}@${pkg.version} wants node ${pkg.engines?.node}`);
    expect(refusing).toEqual([]);
  });

  it('no package in the lock file asks for a newer Node.js either (what a fresh npm ci installs)', () => {
    const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { engines?: { node?: string } | string[] }>;
    };
    const refusing = Object.entries(lock.packages)
      .filter(([, entry]) => {
        const node = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
        return node !== undefined && !semver.satisfies(oldest, node);
      })
      .map(([path]) => path);
    expect(refusing).toEqual([]);
  });
});
