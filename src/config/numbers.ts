// config/numbers.json: which agent profile answers which called number.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../errors.js';
import { checkShape, displayPath, fileError, readJson } from './json-file.js';
import { E164, E164_TEXT, NumbersFile } from './schema.js';
import type { AgentProfile, NumberRouting } from './types.js';

/**
 * Routes every called number to an existing profile. Without the file, every call goes to the
 * profile named `default`, so a folder with a single `default.json` needs nothing else.
 */
export function loadNumbers(
  configDir: string,
  cwd: string,
  profiles: Record<string, AgentProfile>,
): NumberRouting {
  const file = join(configDir, 'numbers.json');
  const shown = displayPath(file, cwd);
  if (!existsSync(file)) {
    if (!Object.hasOwn(profiles, 'default')) {
      throw new ConfigError(
        `${shown}: missing, and there is no agent profile named "default" to answer calls`,
      );
    }
    return { default: 'default', routes: {} };
  }

  const parsed = checkShape(NumbersFile, readJson(file, shown), shown);
  const known = Object.keys(profiles).join(', ');
  const requireProfile = (pointer: string, name: string) => {
    if (!Object.hasOwn(profiles, name)) {
      throw fileError(shown, pointer, `no agent profile named ${JSON.stringify(name)} (profiles: ${known})`);
    }
  };

  requireProfile('/default', parsed.default);
  const routes: Record<string, string> = {};
  for (const [number, profile] of Object.entries(parsed.routes ?? {})) {
    const pointer = `/routes/${number.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    if (!E164.test(number)) throw fileError(shown, pointer, `key must be ${E164_TEXT}`);
    requireProfile(pointer, profile);
    routes[number] = profile;
  }
  return { default: parsed.default, routes };
}
