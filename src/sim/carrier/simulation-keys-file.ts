// The simulated carrier's own keys, shared with `callbridge call` on the same machine
// (docs/security.md, "The simulated carrier"). A server that runs the simulated carrier writes them,
// once it listens, to `$DATA_DIR/simulated-carrier/keys-<port>.json` (mode 0600, like the admin
// token): one file per port, so a second server on the same DATA_DIR never rewrites the keys of
// one still running. The command asks the server it calls for its key id (`GET /`) and signs with
// the file that holds those keys, or says why it cannot. No account's secret is ever in a file.
import {
  chmodSync,
  existsSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import {
  type SimulationKeys,
  simulationKeyId,
  simulationSigningEnv,
} from '../../carriers/simulation-keys.js';
import { ensurePrivateDir, PRIVATE_FILE_MODE } from '../../store/private-files.js';
import { TELNYX_SIM_PRIVATE_KEY_VARIABLE } from './dialects/telnyx-webhooks.js';

export const SIMULATION_KEYS_DIR = 'simulated-carrier';

export interface SavedKeys {
  keyId: string;
  port: number;
  keys: SimulationKeys;
  carriers: string[];
}

/** Writes the keys of the server listening on `port`; returns the file's path. */
export function writeSimulationKeys(
  dataDir: string,
  port: number,
  keys: SimulationKeys,
  carriers: readonly string[],
): string {
  const dir = join(dataDir, SIMULATION_KEYS_DIR);
  ensurePrivateDir(dir);
  const path = join(dir, `keys-${port}.json`);
  const saved: SavedKeys = { keyId: simulationKeyId(keys), port, keys, carriers: [...carriers] };
  // Written aside and renamed: `callbridge call` never reads half a file.
  const partial = `${path}.${process.pid}.tmp`;
  writeFileSync(partial, `${JSON.stringify(saved)}\n`, { mode: PRIVATE_FILE_MODE });
  chmodSync(partial, PRIVATE_FILE_MODE);
  renameSync(partial, path);
  return path;
}

/** DATA_DIR as the server finds it: `DATA_DIR`, else `./data`, from `cwd`. */
export function dataDirOf(env: Record<string, string | undefined>, cwd: string): string {
  return resolve(cwd, env.DATA_DIR?.trim() || './data');
}

/**
 * The saved keys under `dataDir`: those with `keyId` when given, else the newest file's. Null when
 * none is there (no server ran the simulated carrier on this DATA_DIR, or another one's keys).
 */
export function findSimulationKeys(
  dataDir: string,
  keyId?: string,
): { path: string; saved: SavedKeys } | null {
  const dir = join(dataDir, SIMULATION_KEYS_DIR);
  if (!existsSync(dir)) return null;
  const found: Array<{ path: string; saved: SavedKeys; mtimeMs: number }> = [];
  for (const name of readdirSync(dir)) {
    if (!/^keys-\d+\.json$/.test(name)) continue;
    const path = join(dir, name);
    try {
      const saved = JSON.parse(readFileSync(path, 'utf8')) as SavedKeys;
      if (keyId !== undefined && saved.keyId !== keyId) continue;
      found.push({ path, saved, mtimeMs: statSync(path).mtimeMs });
    } catch {
      // A file half written or not ours: not a source of keys.
    }
  }
  const newest = found.sort((a, b) => b.mtimeMs - a.mtimeMs)[0];
  return newest === undefined ? null : { path: newest.path, saved: newest.saved };
}

/** The signing environment of saved keys, for the carriers their server simulates. */
export function signingEnvOf(saved: SavedKeys): Record<string, string | undefined> {
  return simulationSigningEnv(saved.keys, saved.carriers, TELNYX_SIM_PRIVATE_KEY_VARIABLE);
}

/**
 * The signing environment of the simulated carrier a server on this DATA_DIR runs (the newest
 * file's, or the one with `keyId`); empty when there is none.
 */
export function simulationEnvFromDataDir(
  env: Record<string, string | undefined>,
  cwd: string,
  keyId?: string,
): Record<string, string | undefined> {
  const found = findSimulationKeys(dataDirOf(env, cwd), keyId);
  return found === null ? {} : signingEnvOf(found.saved);
}

/** The variables the simulated `carrier` signs from: what the command must not sign with otherwise. */
export function simulationSigningVariables(carrier: string): string[] {
  const any: SimulationKeys = {
    twilioAuthToken: '-',
    plivoAuthToken: '-',
    vonageSignatureSecret: '-',
    telnyxPublicKey: '-',
    telnyxPrivateSeed: '-',
  };
  const env = simulationSigningEnv(any, [carrier], TELNYX_SIM_PRIVATE_KEY_VARIABLE);
  return Object.keys(env).filter((name) => env[name] !== undefined);
}
