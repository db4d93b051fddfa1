// The simulated carrier's own keys, shared with `callbridge call` on the same machine
// (docs/security.md, "The simulated carrier"). The server writes them to `$DATA_DIR/simulation-keys`
// (mode 0600, like the admin token) when it runs the simulated carrier; the command signs its
// requests with them for the carriers the simulation serves, so its calls are verified as simulated
// ones. No account's secret is ever in the file.
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type SimulationKeys, simulationSigningEnv } from '../../carriers/simulation-keys.js';
import { TELNYX_SIM_PRIVATE_KEY_VARIABLE } from './dialects/telnyx-webhooks.js';

export const SIMULATION_KEYS_FILE = 'simulation-keys';

interface SavedKeys {
  keys: SimulationKeys;
  carriers: string[];
}

export function writeSimulationKeys(
  dataDir: string,
  keys: SimulationKeys,
  carriers: readonly string[],
): string {
  const path = join(dataDir, SIMULATION_KEYS_FILE);
  const saved: SavedKeys = { keys, carriers: [...carriers] };
  writeFileSync(path, `${JSON.stringify(saved)}\n`, { mode: 0o600 });
  // An older file keeps its mode on rewrite: made private again.
  chmodSync(path, 0o600);
  return path;
}

/**
 * The signing environment of the simulated carrier this machine's server runs, from the file under
 * DATA_DIR; empty when there is none (no server here, or one with every carrier's credentials).
 */
export function simulationEnvFromDataDir(
  env: Record<string, string | undefined>,
  cwd: string,
): Record<string, string | undefined> {
  const path = join(resolve(cwd, env.DATA_DIR?.trim() || './data'), SIMULATION_KEYS_FILE);
  if (!existsSync(path)) return {};
  try {
    const saved = JSON.parse(readFileSync(path, 'utf8')) as SavedKeys;
    return simulationSigningEnv(saved.keys, saved.carriers, TELNYX_SIM_PRIVATE_KEY_VARIABLE);
  } catch {
    return {};
  }
}
