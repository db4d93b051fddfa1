// The README describes the project as it is: its command table names the tools package.json's
// scripts really run (it once said `npm run lint` runs Biome, which the project does not use);
// it is a guide that reads in a terminal and links a reference in docs/ that names every setting.
// Its sample outputs are checked against real runs in test/e2e/readme-samples.test.ts.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers/build.js';

const readme = readFileSync(new URL('README.md', `file://${ROOT}`), 'utf8');
const configuration = readFileSync(new URL('docs/configuration.md', `file://${ROOT}`), 'utf8');
/** Pages other parts of the project add; the README's contents link them already. */
const LINKED_ELSEWHERE = ['security', 'recordings', 'console', 'api', 'deploy'].map(
  (page) => `docs/${page}.md`,
);
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
  it('links a configuration reference that documents every environment variable the configuration reads', () => {
    const names = variablesRead();
    expect(names.length).toBeGreaterThan(40);
    expect(readme).toContain('(docs/configuration.md)');
    expect(names.filter((name) => !configuration.includes(`\`${name}\``))).toEqual([]);
    // Each variable once in the table: a second row once contradicted the first.
    const rows = configuration.split('\n').filter((line) => line.startsWith('| `'));
    for (const name of names) {
      const defining = rows.filter((row) => row.split('|')[1]!.includes(`\`${name}\``));
      expect(defining.length, name).toBeLessThanOrEqual(1);
    }
  });

  it('reads in a terminal: no line over 100 characters outside sample output', () => {
    let inFence = false;
    const long: string[] = [];
    for (const line of readme.split('\n')) {
      if (line.startsWith('```')) inFence = !inFence;
      else if (!inFence && line.length > 100) long.push(line);
    }
    expect(long).toEqual([]);
    expect(readme.split('\n').length).toBeLessThan(300);
  });

  it('has a table of contents whose links lead somewhere, and links only pages that exist', () => {
    const anchors = new Set(
      readme
        .split('\n')
        .filter((line) => /^#{2,3} /.test(line))
        .map((line) =>
          line
            .replace(/^#+ /, '')
            .toLowerCase()
            .replace(/[^a-z0-9 -]/g, '')
            .replace(/ /g, '-'),
        ),
    );
    for (const [, target] of readme.matchAll(/\]\(([^)]+)\)/g)) {
      if (target!.startsWith('#')) expect(anchors, target).toContain(target!.slice(1));
      else if (!/^https?:/.test(target!) && !LINKED_ELSEWHERE.includes(target!))
        expect(existsSync(new URL(target!, `file://${ROOT}`)), target).toBe(true);
    }
    for (const page of LINKED_ELSEWHERE) expect(readme).toContain(`(${page})`);
    for (const section of [
      'Quick start',
      'Your first simulated call',
      'Your first campaign',
      'Going live',
      'Troubleshooting',
    ])
      expect(anchors).toContain(section.toLowerCase().replace(/ /g, '-'));
  });

  it('keeps to what is true now', () => {
    expect(readme).not.toMatch(/Twilio today/);
    expect(readme).toMatch(/Twilio, Telnyx, Plivo, Vonage or Exotel/);
    expect(readme).toContain('(docs/protocols/speech-service.md)');
    // The order the carriers come in everywhere: the docs page follows the README's.
    const carriers = readFileSync(new URL('docs/carriers.md', `file://${ROOT}`), 'utf8');
    const order = ['Twilio', 'Telnyx', 'Plivo', 'Vonage', 'Exotel'].map((name) =>
      carriers.indexOf(`## ${name}`),
    );
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(order.every((at) => at >= 0)).toBe(true);
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

  // The README's curl once wrote call.wav into the checkout, where git showed it as a new file.
  it('writes files only where git ignores them: every -o and --out of its commands', () => {
    const written = [...readme.matchAll(/(?:^|\s)(?:-o|--out) ([\w./-]+\.\w+)/gm)].map((m) => m[1]!);
    expect(written).toEqual(expect.arrayContaining(['reply.wav', 'call.wav']));
    const check = spawnSync('git', ['check-ignore', '--no-index', ...written], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    if (check.error) throw new Error(`git is needed to read .gitignore: ${check.error.message}`);
    expect(check.stdout.trim().split('\n').sort()).toEqual([...new Set(written)].sort());
  });
});
