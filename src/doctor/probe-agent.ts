// Reachability of the voice agent: the WebSocket handshake a call makes (docs/protocols/agent.md sections 2 and 12),
// at `$AGENT_URL/v1/agent/converse` with the configured credentials, closed again at once. The
// handshake's HTTP status is the answer: 101 accepted, 401/403 bad credentials, 429 at capacity.
import { openAgentSocket } from '../agent/connect.js';
import { AGENT_PATH } from '../agent/protocol.js';
import type { Config } from '../config/types.js';
import { AgentConnectError } from '../errors.js';
import { describeNetworkError } from './network-error.js';
import { httpJson } from './http-request.js';
import { type CheckLine, fail, ok, unreachable, warn } from './report.js';

/** Frames the probe would accept before it closes; it reads none. */
const MAX_PAYLOAD_BYTES = 64 * 1024;
const CLOSE_TIMEOUT_MS = 1000;

export async function probeAgent(agent: Config['agent'], timeoutMs: number): Promise<CheckLine> {
  const url = `${agent.url}${AGENT_PATH}`;
  const subject = `voice agent ${url}`;
  let authorization = `Token ${agent.apiKey}`;
  if (agent.auth === 'grant') {
    const grant = await mintGrant(agent, timeoutMs);
    if (!grant.ok) return fail(`${subject}: cannot get a grant: ${grant.problem}`);
    authorization = `Bearer ${grant.token}`;
  }
  try {
    const { ws } = await openAgentSocket({
      url,
      authorization,
      connectTimeoutMs: timeoutMs,
      maxPayloadBytes: MAX_PAYLOAD_BYTES,
    });
    // The agent waits for Settings; a normal close before it costs nothing.
    const closed = new Promise<void>((resolve) => ws.once('close', () => resolve()));
    ws.close(1000, 'callbridge doctor');
    const timer = setTimeout(() => ws.terminate(), CLOSE_TIMEOUT_MS);
    await closed;
    clearTimeout(timer);
    return ok(`${subject}: handshake accepted (101)`);
  } catch (err) {
    if (!(err instanceof AgentConnectError)) {
      const cause = describeNetworkError(err, timeoutMs);
      return unreachable('voice agent', url, cause, `${subject}: ${cause}`);
    }
    switch (err.status) {
      case 401:
      case 403:
        return fail(`${subject}: credentials rejected (HTTP ${err.status}): check AGENT_API_KEY`);
      case 429:
        // Reachable and authorized: the account is at its concurrent-session limit right now.
        return warn(`${subject}: at capacity (HTTP 429), too many concurrent sessions right now`);
      case undefined: {
        const cause =
          err.code === 'CALLBRIDGE_AGENT_TIMEOUT'
            ? `no answer within ${timeoutMs} ms`
            : describeNetworkError(err.cause ?? err, timeoutMs);
        return unreachable('voice agent', url, cause, `${subject}: ${cause}`);
      }
      default:
        return fail(`${subject}: handshake refused with HTTP ${err.status}`);
    }
  }
}

type Grant = { ok: true; token: string } | { ok: false; problem: string };

/** AGENT_AUTH=grant: the short-lived JWT a call would mint (`POST $SPEECH_API_URL/v1/auth/grant`). */
async function mintGrant(agent: Config['agent'], timeoutMs: number): Promise<Grant> {
  const url = `${agent.speechApiUrl}/v1/auth/grant`;
  let res: { status: number; body: unknown };
  try {
    res = await httpJson(url, {
      method: 'POST',
      headers: { authorization: `Token ${agent.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ttl_seconds: 30 }),
      timeoutMs,
    });
  } catch (err) {
    return { ok: false, problem: `${url}: ${describeNetworkError(err, timeoutMs)}` };
  }
  const body = res.body as { access_token?: unknown } | null | undefined;
  const accepted = res.status >= 200 && res.status < 300;
  if (accepted && typeof body?.access_token === 'string') return { ok: true, token: body.access_token };
  return { ok: false, problem: `${url} answered HTTP ${res.status}` };
}
