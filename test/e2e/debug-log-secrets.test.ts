// Contexts, tokens and contact variables never appear in logs at any level (docs/security.md): one
// outbound call through every carrier, on the built-in simulated carrier, with LOG_LEVEL=debug, and
// the whole output searched for them. The calls themselves must go through: a quiet log of calls
// that never happened would prove nothing.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, type ServerProcess, spawnServer } from '../helpers/server-process.js';

const TOKEN = 'admin-token-for-the-debug-log-test';
const CARRIERS = ['twilio', 'telnyx', 'plivo', 'vonage', 'exotel'] as const;
/** A contact variable no log line has any reason to hold. */
const SECRET_WORD = `zebra${randomBytes(6).toString('hex')}`;
let server: ServerProcess;

beforeAll(async () => {
  await ensureBuilt();
  server = await spawnServer({
    ADMIN_TOKEN: TOKEN,
    LOG_LEVEL: 'debug',
    SIM_CALLEE_SPEEDUP: '20',
    // The simulated Exotel calls from loopback, named here as Exotel's network.
    EXOTEL_ALLOWED_CIDRS: '127.0.0.1/32,::1/128',
  });
}, 60_000);

afterAll(async () => {
  await server?.dispose();
});

async function admin(method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${server.baseUrl}/v1${path}`, {
    method,
    headers: {
      authorization: `Bearer ${TOKEN}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

describe('a debug-level log of a call through every carrier', () => {
  it('holds no outbound context, no token and no contact variable', async () => {
    const placed: string[] = [];
    for (const carrier of CARRIERS) {
      const res = await admin('POST', '/calls', {
        to: '+12125550100',
        carrier,
        variables: { secret_word: SECRET_WORD },
      });
      const text = await res.text();
      expect(res.status, `${carrier}: ${text}`).toBe(201);
      placed.push((JSON.parse(text) as { callSid: string }).callSid);
    }
    // Every call answered, talked and ended: its record is saved. (Plivo's placed id names the
    // request, not the call, so the records are counted.)
    await expect
      .poll(
        async () => {
          const page = (await (await admin('GET', '/calls')).json()) as { calls: Array<{ carrier: string }> };
          return [...new Set(page.calls.map((call) => call.carrier))].sort();
        },
        { timeout: 60_000, interval: 250, message: server.output().slice(-4000) },
      )
      .toEqual([...CARRIERS].sort());
    const log = server.output();
    expect(log).toContain('"level":20');
    expect(log).toContain(placed[0]);
    expect(log).not.toContain(SECRET_WORD);
    // Context references (r1.<id>.<binding>), formerly sealed contexts (c1.<body>.<mac>), stream
    // tokens (v1.<body>.<mac>), observer tokens.
    expect(log).not.toMatch(/r1\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}/);
    expect(log).not.toMatch(/c1\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}/);
    expect(log).not.toMatch(/v1\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}/);
    expect(log).not.toMatch(/o1\.[a-z]+\.\d+\.[A-Za-z0-9_-]{16,}/);
    expect(log).not.toContain(TOKEN);
  }, 120_000);
});
