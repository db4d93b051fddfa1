// How the simulated phone learns what the server asked of the simulated carrier API, for carriers
// that answer a call through their API rather than in the webhook's response (Telnyx). The server's
// `GET /` names the API as `simulatedCarrierApi`; until it does, `CALLBRIDGE_SIM_CARRIER_API` in the
// environment names it.
import type { SimCallRecord } from '../../carrier-api/call-log.js';

export const SIM_CARRIER_API_VARIABLE = 'CALLBRIDGE_SIM_CARRIER_API';

export async function findSimulatedCarrierApi(
  server: string,
  env: Record<string, string | undefined>,
  timeoutMs: number,
): Promise<string | undefined> {
  try {
    const response = await fetch(`${server}/`, { signal: AbortSignal.timeout(timeoutMs) });
    const info = (await response.json()) as { simulatedCarrierApi?: unknown };
    if (typeof info.simulatedCarrierApi === 'string' && /^https?:\/\//.test(info.simulatedCarrierApi)) {
      return info.simulatedCarrierApi.replace(/\/+$/, '');
    }
  } catch {
    // An older server, or none at all: the environment may still name the API.
  }
  const fromEnv = env[SIM_CARRIER_API_VARIABLE]?.trim();
  return fromEnv ? fromEnv.replace(/\/+$/, '') : undefined;
}

/** The call's record once `wait` holds (`answer`, `stream`, `speak`, `end`), or as it is at the timeout. */
export async function waitForSimCall(
  api: string,
  callSid: string,
  wait: 'answer' | 'stream' | 'speak' | 'end',
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<SimCallRecord | undefined> {
  const url = `${api}/sim/calls/${encodeURIComponent(callSid)}?wait=${wait}&timeoutMs=${timeoutMs}`;
  const response = await fetch(url, {
    signal: AbortSignal.any([AbortSignal.timeout(timeoutMs + 5_000), ...(signal ? [signal] : [])]),
  });
  if (response.status === 404) return undefined;
  if (!response.ok) throw new Error(`simulated carrier API answered HTTP ${response.status}`);
  return (await response.json()) as SimCallRecord;
}
