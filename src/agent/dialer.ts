// Dials the voice agent for a call: credentials (an API key, or a short-lived grant minted per
// call), the socket, then `Settings`. Everything a call needs from the agent host goes through here.
import type { Logger } from 'pino';
import type { AgentAuth } from '../config/types.js';
import { AgentConnectError, retryableStatus } from '../errors.js';
import type { Metrics } from '../metrics/metrics.js';
import { openAgentSocket } from './connect.js';
import { AGENT_PATH, type SettingsMessage } from './protocol.js';
import { AgentSession } from './session.js';

export interface AgentTarget {
  /** Agent host, `ws`/`wss`, no path. */
  url: string;
  apiKey: string;
  auth: AgentAuth;
  speechApiUrl: string;
  connectTimeoutMs: number;
}

export type AgentDialer = (settings: SettingsMessage, logger: Logger) => Promise<AgentSession>;

const MAX_AGENT_FRAME_BYTES = 1024 * 1024;

/** docs/protocols/agent.md section 2: a grant only has to be valid at the handshake, so a short TTL suffices. */
async function mintGrant(target: AgentTarget): Promise<string> {
  let res: Response;
  try {
    res = await fetch(`${target.speechApiUrl}/v1/auth/grant`, {
      method: 'POST',
      headers: { authorization: `Token ${target.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ttl_seconds: 30 }),
      signal: AbortSignal.timeout(target.connectTimeoutMs),
    });
  } catch (err) {
    throw new AgentConnectError(`token grant failed: ${(err as Error).message}`, {
      code: 'CALLBRIDGE_AGENT_GRANT',
      retryable: true,
    });
  }
  const body = (await res.json().catch(() => null)) as { access_token?: unknown } | null;
  if (!res.ok || typeof body?.access_token !== 'string') {
    throw new AgentConnectError(`token grant answered HTTP ${res.status}`, {
      code: 'CALLBRIDGE_AGENT_GRANT',
      retryable: retryableStatus(res.status),
      status: res.status,
    });
  }
  return body.access_token;
}

export function createAgentDialer(target: AgentTarget, metrics: Metrics): AgentDialer {
  return async (settings, logger) => {
    const started = performance.now();
    try {
      const authorization =
        target.auth === 'grant' ? `Bearer ${await mintGrant(target)}` : `Token ${target.apiKey}`;
      const socket = await openAgentSocket({
        url: `${target.url}${AGENT_PATH}`,
        authorization,
        connectTimeoutMs: target.connectTimeoutMs,
        maxPayloadBytes: MAX_AGENT_FRAME_BYTES,
      });
      return new AgentSession(socket, settings, {
        dialStartedAtMs: started,
        maxHeldOutputBytes: 512 * 1024,
        maxBufferedBytes: 256 * 1024,
        metrics,
        logger,
      });
    } catch (err) {
      const code = err instanceof AgentConnectError ? err.code : 'CALLBRIDGE_AGENT_UNREACHABLE';
      metrics.agentConnectDuration.observe({ outcome: 'failed' }, (performance.now() - started) / 1000);
      metrics.agentErrors.inc({ kind: 'connect', code });
      throw err;
    }
  };
}
