// Who gets in: API keys, granted JWTs checked at the handshake only, the concurrent connection
// limit and scripted refusals (docs/protocols/speech-service.md sections 2, 9 and 10), and the REST subset.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { issueJwt, signJwt } from '../../src/sim/agent/jwt.js';
import { type LocalAgent, type LocalAgentOptions, startLocalAgent } from '../../src/sim/agent/server.js';
import { AgentTestClient, makeSettings, refusedStatus } from './local-agent-client.js';

const JWT_SECRET = 'test-jwt-secret';

let agent: LocalAgent | undefined;
const clients: AgentTestClient[] = [];

async function start(opts: Partial<LocalAgentOptions> = {}): Promise<LocalAgent> {
  agent = await startLocalAgent({
    port: 0,
    realtime: false,
    apiKeys: ['k1'],
    jwtSecret: JWT_SECRET,
    ...opts,
  });
  return agent;
}

async function connect(authorization = 'Token k1'): Promise<AgentTestClient> {
  const client = await AgentTestClient.connect(agent!.url, authorization);
  clients.push(client);
  await client.next('Welcome');
  return client;
}

afterEach(async () => {
  vi.useRealTimers();
  for (const client of clients.splice(0)) client.close();
  await agent?.close();
  agent = undefined;
});

describe('authentication at the handshake', () => {
  it('accepts a listed API key and refuses others with 401', async () => {
    await start();
    await connect('Token k1');
    expect(await refusedStatus(agent!.url, 'Token wrong')).toBe(401);
    expect(await refusedStatus(agent!.url)).toBe(401);
    expect(await refusedStatus(agent!.url, 'Basic abc')).toBe(401);
  });

  it('accepts any non-empty key when no keys are configured', async () => {
    await start({ apiKeys: [] });
    await connect('Token anything');
  });

  it('grants a JWT for an API key, and the JWT opens the socket', async () => {
    await start();
    const res = await fetch(`${agent!.httpUrl}/v1/auth/grant`, {
      method: 'POST',
      headers: { authorization: 'Token k1', 'content-type': 'application/json' },
      body: JSON.stringify({ ttl_seconds: 60 }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { access_token: string; expires_in: number };
    expect(body.expires_in).toBe(60);
    await connect(`Bearer ${body.access_token}`);
  });

  it('grants 30 s tokens by default and refuses a grant without a valid key', async () => {
    await start();
    const ok = await fetch(`${agent!.httpUrl}/v1/auth/grant`, {
      method: 'POST',
      headers: { authorization: 'Token k1' },
    });
    expect(((await ok.json()) as { expires_in: number }).expires_in).toBe(30);
    const bad = await fetch(`${agent!.httpUrl}/v1/auth/grant`, {
      method: 'POST',
      headers: { authorization: 'Token no' },
    });
    expect(bad.status).toBe(401);
    const jwt = issueJwt(JWT_SECRET, 30);
    const withJwt = await fetch(`${agent!.httpUrl}/v1/auth/grant`, {
      method: 'POST',
      headers: { authorization: `Bearer ${jwt}` },
    });
    expect(withJwt.status).toBe(401);
  });

  it('refuses an expired JWT and one signed with another secret', async () => {
    await start();
    const now = Math.floor(Date.now() / 1000);
    const expired = signJwt({ sub: 't', iat: now - 60, exp: now - 30, jti: 'a' }, JWT_SECRET);
    expect(await refusedStatus(agent!.url, `Bearer ${expired}`)).toBe(401);
    expect(await refusedStatus(agent!.url, `Bearer ${issueJwt('other-secret', 30)}`)).toBe(401);
  });

  it('keeps a socket open after its JWT expires (docs/protocols/speech-service.md section 2)', async () => {
    await start();
    const client = await connect(`Bearer ${issueJwt(JWT_SECRET, 30)}`);
    // Only Date is faked: the sockets keep their real timers.
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 120_000);
    client.send(makeSettings());
    await client.next('SettingsApplied');
  });
});

describe('admission', () => {
  it('refuses the upgrade beyond maxConnections with 429 and admits again after a close', async () => {
    await start({ maxConnections: 1 });
    const first = await connect();
    expect(agent!.connections()).toBe(1);
    expect(await refusedStatus(agent!.url, 'Token k1')).toBe(429);
    first.ws.close();
    await first.closed;
    await vi.waitFor(() => expect(agent!.connections()).toBe(0));
    await connect();
  });

  it('refuses as many handshakes as the scenario says, then admits', async () => {
    await start({ scenario: { turns: [], refuseHandshake: { status: 429, times: 2 } } });
    expect(await refusedStatus(agent!.url, 'Token k1')).toBe(429);
    expect(await refusedStatus(agent!.url, 'Token k1')).toBe(429);
    await connect();
  });

  it('refuses every handshake when the scenario gives no count', async () => {
    await start({ scenario: { turns: [], refuseHandshake: { status: 503 } } });
    for (let i = 0; i < 3; i++) expect(await refusedStatus(agent!.url, 'Token k1')).toBe(503);
  });

  it('answers 404 for another WebSocket path', async () => {
    await start();
    expect(await refusedStatus(agent!.url, 'Token k1', '/v1/listen')).toBe(404);
  });
});

describe('REST subset', () => {
  it('lists think models for an authenticated request', async () => {
    await start();
    const res = await fetch(`${agent!.httpUrl}/v1/agent/settings/think/models`, {
      headers: { authorization: 'Token k1' },
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { models: { id: string; provider: string }[] };
    expect(body.models.length).toBeGreaterThan(0);
    expect(body.models[0]).toMatchObject({ id: expect.any(String), provider: expect.any(String) });
  });

  it('answers 401 without credentials and 404 JSON elsewhere', async () => {
    await start();
    expect((await fetch(`${agent!.httpUrl}/v1/agent/settings/think/models`)).status).toBe(401);
    const missing = await fetch(`${agent!.httpUrl}/v1/listen`, { headers: { authorization: 'Token k1' } });
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toBe('application/json');
    expect(await missing.json()).toMatchObject({ err_code: 'NOT_FOUND' });
  });
});
