// The README describes the project as it is: its command table names the tools package.json's
// scripts really run (it once said `npm run lint` runs Biome, which the project does not use).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers/build.js';

const readme = readFileSync(new URL('README.md', `file://${ROOT}`), 'utf8');
const scripts = (
  JSON.parse(readFileSync(new URL('package.json', `file://${ROOT}`), 'utf8')) as {
    scripts: Record<string, string>;
  }
).scripts;

describe('README', () => {
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
