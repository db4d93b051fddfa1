// A signed carrier request replayed is refused on every instance and after a restart
// (docs/security.md): Plivo's signature nonce and Vonage's token (its jti, or the token itself when
// it has none) are claimed once in the shared store. Two production instances on one Redis, through
// the real process. Needs Redis.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeAgent, startFakeAgent } from '../helpers/fake-agent.js';
import { answerParams, newNonce, plivoHeaders } from '../helpers/plivo-carrier.js';
import { deleteKeys, REDIS_URL, redisAvailable } from '../helpers/redis.js';
import { disposeAll, ensureBuilt, type ServerProcess, spawnServer } from '../helpers/server-process.js';

const hasRedis = await redisAvailable();
if (!hasRedis) console.warn(`skipping test/e2e/replays-fleet.test.ts: no Redis answers at ${REDIS_URL}`);

const PUBLIC_URL = 'https://bridge.example.com';
const PLIVO_TOKEN = 'plivo-auth-token-of-the-replay-test-01';
const VONAGE_SECRET = 'vonage-signature-secret-of-the-replay-test';

/** A signed request, kept byte for byte so it can be sent again. */
interface Captured {
  path: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
}

const send = async (server: ServerProcess, request: Captured) => {
  const res = await fetch(`${server.baseUrl}${request.path}`, {
    method: request.method,
    headers: request.headers,
    ...(request.body === undefined ? {} : { body: request.body }),
  });
  return { status: res.status, body: await res.text() };
};

function plivoAnswer(): Captured {
  const path = '/carriers/plivo/answer';
  const params = answerParams();
  return {
    path,
    method: 'POST',
    headers: plivoHeaders(path, params, {
      kind: 'valid',
      authToken: PLIVO_TOKEN,
      publicUrl: PUBLIC_URL,
      nonce: newNonce(),
    }),
    body: new URLSearchParams(params).toString(),
  };
}

/**
 * Vonage's answer webhook signed with a token that has no jti, which once replayed for 5 minutes.
 * Such a token is claimed by its own bytes; each capture is another call, so another token.
 */
function vonageAnswerWithoutJti(): Captured {
  const token = jwt.sign(
    {
      iss: 'Vonage',
      application_id: '00000000-0000-4000-8000-000000000000',
      payload_hash: createHash('sha256').update('').digest('hex'),
      iat: Math.floor(Date.now() / 1000),
      sub: randomUUID(),
    },
    VONAGE_SECRET,
    { algorithm: 'HS256' },
  );
  const query = new URLSearchParams({ uuid: randomUUID(), from: '15550100', to: '15550101' });
  return {
    path: `/carriers/vonage/answer?${query}`,
    method: 'GET',
    headers: { authorization: `Bearer ${token}` },
  };
}

describe.skipIf(!hasRedis)('replays across two instances sharing Redis', () => {
  const prefix = `cbtest-replays-${randomBytes(4).toString('hex')}:`;
  let agent: FakeAgent;
  let env: Record<string, string>;
  let first: ServerProcess;
  let second: ServerProcess;

  beforeAll(async () => {
    await ensureBuilt();
    agent = await startFakeAgent({ autoApply: true });
    env = {
      NODE_ENV: 'production',
      PUBLIC_URL,
      REDIS_URL,
      REDIS_KEY_PREFIX: prefix,
      AGENT_URL: agent.url,
      AGENT_API_KEY: 'agent-key',
      STREAM_TOKEN_SECRET: 'stream-token-secret-of-the-replay-fleet-test',
      TWILIO_ACCOUNT_SID: `AC${'4'.repeat(32)}`,
      TWILIO_AUTH_TOKEN: 'twilio-auth-token-of-the-replay-test',
      PLIVO_AUTH_ID: 'MAREPLAYTEST00000000',
      PLIVO_AUTH_TOKEN: PLIVO_TOKEN,
      VONAGE_SIGNATURE_SECRET: VONAGE_SECRET,
      EXOTEL_ALLOWED_CIDRS: '203.0.113.0/24',
    };
    [first, second] = await Promise.all([
      spawnServer({ ...env, INSTANCE_ID: 'replay-1' }),
      spawnServer({ ...env, INSTANCE_ID: 'replay-2' }),
    ]);
  }, 120_000);

  afterAll(async () => {
    await disposeAll();
    await agent?.close();
    await deleteKeys(prefix);
  });

  it.each([
    ['a Plivo answer (its nonce)', plivoAnswer],
    ['a Vonage answer signed without jti (its token)', vonageAnswerWithoutJti],
  ])(
    'refuses %s replayed on the other instance and after a restart',
    async (_, capture) => {
      // Issue 19: a captured signed Plivo answer was refused by the instance that saw it and accepted
      // on a second instance and after a restart.
      const request = capture();
      const taken = await send(first, request);
      expect(taken.status).toBe(200);
      const replayed = await send(second, request);
      expect(replayed.status).toBe(403);
      expect(JSON.parse(replayed.body).error.code).toBe('CALLBRIDGE_BAD_SIGNATURE');

      // A restart as a crash: nothing but the shared store remembers the request.
      await first.kill('SIGKILL');
      first = await spawnServer({ ...env, INSTANCE_ID: 'replay-1' });
      expect((await send(first, request)).status).toBe(403);

      // The legitimate path: a fresh signed request is still taken, on either instance.
      expect((await send(second, capture())).status).toBe(200);
      expect((await send(first, capture())).status).toBe(200);
    },
    60_000,
  );
});
