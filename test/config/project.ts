// Builds throwaway project folders (a `config/` folder and whatever else a test needs) from the
// minimal fixture, so each test states only the files it is about.
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../src/carriers/load-config.js';
import type { Config } from '../../src/config/types.js';

/** A project root holding `config/regions.json`, `config/agents/default.json` and `assets/hold.ulaw`. */
export const MINIMAL_PROJECT = fileURLToPath(new URL('../fixtures/config/minimal/', import.meta.url));

export const MINIMAL_PROFILE = {
  prompt: 'You answer the phone for a test.',
  think: { provider: { type: 'open_ai', model: 'gpt-4o-mini' } },
};

/** The fixture's regions.json text, for projects whose config folder lives elsewhere. */
export const REGIONS_JSON = readFileSync(join(MINIMAL_PROJECT, 'config/regions.json'), 'utf8');

const created: string[] = [];

/**
 * A copy of the minimal project with `files` written over it: objects as JSON, strings as they
 * are, `null` deletes the file.
 */
export function makeProject(files: Record<string, unknown> = {}): string {
  const root = mkdtempSync(join(tmpdir(), 'callbridge-config-'));
  created.push(root);
  cpSync(MINIMAL_PROJECT, root, { recursive: true });
  for (const [path, content] of Object.entries(files)) {
    const target = join(root, path);
    if (content === null) {
      rmSync(target, { recursive: true, force: true });
      continue;
    }
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  }
  return root;
}

export function removeProjects(): void {
  for (const root of created.splice(0)) rmSync(root, { recursive: true, force: true });
}

/** Loads the minimal project (or `root`) with `env`. */
export function load(env: Record<string, string | undefined> = {}, root = MINIMAL_PROJECT): Config {
  return loadConfig(env, { cwd: root });
}

/** The ConfigError `run` throws; fails the test when it throws nothing or something else. */
export function configErrorOf(run: () => unknown): Error & { code: string } {
  try {
    run();
  } catch (err) {
    const error = err as Error & { code: string };
    if (error.code !== 'CALLBRIDGE_CONFIG_INVALID') throw err;
    if (error.message.includes('\n')) throw new Error(`message spans lines: ${error.message}`);
    return error;
  }
  throw new Error('expected a ConfigError, but loading succeeded');
}

/** The message of the ConfigError that loading a project with one profile `default.json` throws. */
export function profileError(profile: unknown): string {
  const root = makeProject({ 'config/agents/default.json': profile });
  return configErrorOf(() => load({}, root)).message;
}

/** Loads a project whose only profile is `profile` and returns it. */
export function loadProfile(profile: unknown): Config['profiles'][string] {
  const root = makeProject({ 'config/agents/default.json': profile });
  const config = load({}, root);
  return config.profiles.default!;
}
