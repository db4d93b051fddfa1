// Two server processes sharing one Redis behave as one gateway: a duplicate sent to each is
// forwarded once, and queued events are drained once between them. Runs the real entry point
// (dist/main.js; `npm run build` first) and needs Redis; each run has its own key prefix.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  disposeAll,
  ensureBuilt,
  freePort,
  type ServerProcess,
  spawnServer,
} from '../../helpers/server-process.js';
import { deleteKeys, REDIS_URL, redisAvailable } from '../../helpers/redis.js';
import { hmacOf, waitUntil } from '../helpers.js';
import { type FixedPortGateway, operatorGatewayAt } from '../operator-at.js';
import { CODE_SECRET, queueWorkflowRun } from './deliveries.js';

const redisUp = await redisAvailable();
if (!redisUp) console.warn(`skipping the shared-Redis process tests: no Redis answers at ${REDIS_URL}`);

const DEPLOY_SECRET = 'process-deploy-secret';

describe.skipIf(!redisUp)('two server processes sharing Redis', () => {
  beforeAll(ensureBuilt, 120_000);
  const keyPrefix = `callbridge-test:${randomUUID()}:`;
  let operator: FixedPortGateway | undefined;
  let servers: ServerProcess[] = [];
  const dataDir = mkdtempSync(join(tmpdir(), 'callbridge-process-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  afterEach(async () => {
    await disposeAll();
    await operator?.close();
    await deleteKeys(keyPrefix);
  });

  async function startPair() {
    const operatorPort = await freePort();
    operator = await operatorGatewayAt(operatorPort);
    const env = {
      DATA_DIR: dataDir,
      REDIS_URL,
      REDIS_KEY_PREFIX: keyPrefix,
      WEBHOOK_SECRET_CODE: CODE_SECRET,
      WEBHOOK_SECRET_DEPLOY: DEPLOY_SECRET,
      QUEUE_PILOTS: 'code',
      OPERATOR_GATEWAY_URL: `http://127.0.0.1:${operatorPort}/events`,
    };
    servers = await Promise.all([spawnServer(env), spawnServer(env)]);
    return servers as [ServerProcess, ServerProcess];
  }

  it('forwards a duplicate sent to each server once', { timeout: 60_000 }, async () => {
    const [a, b] = await startPair();
    const body = JSON.stringify({ id: `evt-${randomUUID()}`, type: 'deployment.succeeded' });
    const send = (server: ServerProcess) =>
      fetch(`${server.baseUrl}/webhooks/deploy`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-deploy-signature': hmacOf('sha1', DEPLOY_SECRET, body).toString('hex'),
        },
        body,
      });
    const answers = await Promise.all([send(a), send(b)]);
    expect(answers.some((r) => r.status === 200)).toBe(true);
    // The provider retries whichever got 503 (in progress); that retry is a duplicate.
    for (const server of [a, b]) expect(await (await send(server)).json()).toEqual({ status: 'duplicate' });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(operator?.received).toHaveLength(1);
  });

  it('drains queued events once between the two servers', { timeout: 60_000 }, async () => {
    const [a, b] = await startPair();
    const deliveries = Array.from({ length: 20 }, () => randomUUID());
    await Promise.all(
      deliveries.map(async (delivery, n) => {
        const res = await queueWorkflowRun((n % 2 ? a : b).baseUrl, delivery);
        expect(res.status).toBe(202);
      }),
    );
    await waitUntil(
      () => (operator?.received.length ?? 0) >= deliveries.length,
      30_000,
      'every queued event',
    );
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const keys = operator!.received.map((r) => r.key).sort();
    expect(keys).toEqual(deliveries.map((d) => `code:${d}`).sort());
  });
});
