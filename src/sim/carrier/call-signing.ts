// How `callbridge call` signs, agreed with the server it calls (docs/security.md, "The simulated
// carrier"). The server says in `GET /` which carriers it simulates and the id of its simulation
// keys; for such a carrier the command signs with the keys of that id found under DATA_DIR (the
// server checks those and no others), and otherwise with the carrier's credentials in its
// environment, as a real carrier would. When the two cannot agree the header says exactly why.
import type { SimDialect } from './dialect.js';
import {
  dataDirOf,
  findSimulationKeys,
  signingEnvOf,
  simulationSigningVariables,
} from './simulation-keys-file.js';

type Env = Record<string, string | undefined>;

export interface CallSigning {
  /** The environment the dialect signs from. */
  env: Env;
  /** How the call is signed, for the command's first line. */
  note: string;
}

interface ServerSimulation {
  keyId: string;
  carriers: string[];
}

/** The simulation the server at `server` runs; null when it runs none or did not say. */
async function serverSimulation(server: string): Promise<ServerSimulation | null> {
  try {
    const res = await fetch(`${server.replace(/\/+$/, '')}/`, { signal: AbortSignal.timeout(3_000) });
    if (!res.ok) return null;
    const info = (await res.json()) as { simulation?: Partial<ServerSimulation> };
    const { keyId, carriers } = info.simulation ?? {};
    return typeof keyId === 'string' && Array.isArray(carriers) ? { keyId, carriers } : null;
  } catch {
    // The call itself reports an unreachable server, with the reason.
    return null;
  }
}

export async function callSigning(opts: {
  server: string;
  dialect: SimDialect;
  /** The command's environment, empty values already left out. */
  env: Env;
  cwd: string;
}): Promise<CallSigning> {
  const { server, dialect, env } = opts;
  const signingVariables = simulationSigningVariables(dialect.name);
  const simulation = signingVariables.length === 0 ? null : await serverSimulation(server);
  if (simulation === null || !simulation.carriers.includes(dialect.name)) {
    return { env, note: dialect.describeSigning(env) };
  }
  const dataDir = dataDirOf(env, opts.cwd);
  const found = findSimulationKeys(dataDir, simulation.keyId);
  if (found !== null) {
    // The server checks this carrier against its simulation's keys only: they win over any here.
    const signed = { ...env, ...signingEnvOf(found.saved) };
    return {
      env: signed,
      note: `${dialect.describeSigning(signed)}, with the simulated carrier's keys in ${found.path}`,
    };
  }
  // Unsigned, the server answers as to an unverified request (outside production): the call works.
  const unsigned = Object.fromEntries(
    Object.entries(env).filter(([name]) => !signingVariables.includes(name)),
  );
  return {
    env: unsigned,
    note:
      `unsigned: the server checks ${dialect.name} against its simulated carrier's keys, ` +
      `and ${dataDir} holds none of them (set DATA_DIR to the server's)`,
  };
}
