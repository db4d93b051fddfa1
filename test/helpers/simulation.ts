// The simulated carrier's own keys as tests give them to a simulated callee: derived from the stream
// token secret the server under test is started with (src/carriers/simulation-keys.ts), so the
// server trusts the callee's callbacks for carriers without credentials, and only for them.
import { simulationKeysFor, simulationSigningEnv } from '../../src/carriers/simulation-keys.js';
import { TELNYX_SIM_PRIVATE_KEY_VARIABLE } from '../../src/sim/carrier/dialects/telnyx-webhooks.js';

/** The STREAM_TOKEN_SECRET of servers whose simulated carrier a test runs itself. */
export const SIMULATION_SECRET = 'stream-token-secret-shared-with-the-simulated-carrier';

const CARRIERS = ['twilio', 'telnyx', 'plivo', 'vonage', 'exotel'];

/** The environment a simulated callee signs with, for a server started with `secret`. */
export function simulatedCalleeEnv(
  secret = SIMULATION_SECRET,
  carriers: readonly string[] = CARRIERS,
): Record<string, string | undefined> {
  return simulationSigningEnv(simulationKeysFor(secret), carriers, TELNYX_SIM_PRIVATE_KEY_VARIABLE);
}
