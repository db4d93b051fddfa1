// How long a stopping instance may take, as the deployment files must allow for it: the drain
// (DRAIN_TIMEOUT_MS, default from the config) and then the goodbyes of calls still up, which
// src/main.ts waits for (read from its source: the process entry point cannot be imported).
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/carriers/load-config.js';

const ROOT = join(import.meta.dirname, '../..');

export const FAREWELL_WAIT_MS = Number(
  /const FAREWELL_WAIT_MS = ([\d_]+);/
    .exec(readFileSync(join(ROOT, 'src/main.ts'), 'utf8'))?.[1]
    ?.replaceAll('_', ''),
);

export const DEFAULT_DRAIN_TIMEOUT_MS = loadConfig(
  { LOG_LEVEL: 'silent', DATA_DIR: tmpdir() },
  { cwd: ROOT },
).drainTimeoutMs;
