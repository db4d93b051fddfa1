// The bench's calls are signed the way the built-in simulated carrier signs them (docs/security.md,
// "The simulated carrier"): with keys derived from the stream-token secret the bench gives its
// server. The server then takes them as verified calls, as it takes a real carrier's signed
// webhooks, so the load exercises the path production calls take (pre-warm included).
import { simulationKeysFor, simulationSigningEnv } from '../carriers/simulation-keys.js';
import { TELNYX_SIM_PRIVATE_KEY_VARIABLE } from '../sim/carrier/dialects/telnyx-webhooks.js';

export const BENCH_STREAM_TOKEN_SECRET = 'bench-stream-token-secret-00000000000';

/** What a simulated `carrier` signs its webhooks with, for a server started with the bench's secret. */
export function benchSigningEnv(carrier: string): Record<string, string | undefined> {
  return simulationSigningEnv(
    simulationKeysFor(BENCH_STREAM_TOKEN_SECRET),
    [carrier],
    TELNYX_SIM_PRIVATE_KEY_VARIABLE,
  );
}
