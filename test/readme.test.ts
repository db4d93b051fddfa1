// The README describes the project as it is: its command table names the tools package.json's
// scripts really run (it once said `npm run lint` runs Biome, which the project does not use).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers/build.js';

const readme = readFileSync(new URL('README.md', `file://${ROOT}`), 'utf8');
const scripts = (
  JSON.parse(readFileSync(new URL('package.json', `file://${ROOT}`), 'utf8')) as {
    scripts: Record<string, string>;
  }
).scripts;

/** Every variable the configuration reads (`envString(env, 'NAME')` and its siblings). */
function variablesRead(): string[] {
  const dir = join(ROOT, 'src', 'config');
  const names = new Set<string>();
  for (const file of readdirSync(dir).filter((name) => name.endsWith('.ts'))) {
    const source = readFileSync(join(dir, file), 'utf8');
    for (const match of source.matchAll(/\benv[A-Za-z]*\(env, '([A-Z][A-Z0-9_]+)'/g)) names.add(match[1]!);
  }
  return [...names].sort();
}

describe('README', () => {
  it('documents every environment variable the configuration reads', () => {
    const names = variablesRead();
    expect(names.length).toBeGreaterThan(40);
    expect(names.filter((name) => !readme.includes(`\`${name}\``))).toEqual([]);
  });

  it('names the linter and formatter that `npm run lint` runs, and no other', () => {
    const row = readme.split('\n').find((line) => line.startsWith('| `npm run lint`'));
    expect(row).toBeDefined();
    expect(scripts.lint).toMatch(/\beslint\b/);
    expect(scripts.lint).toMatch(/\bprettier\b/);
    expect(row).toMatch(/ESLint/);
    expect(row).toMatch(/Prettier/);
    expect(readme).not.toMatch(/Biome/i);
  });
});
