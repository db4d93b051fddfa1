// A rolling deploy under load: three `node dist/main.js` processes sharing Redis behind the real
// nginx configured by deploy/nginx/render.mjs, a campaign running on the simulated carrier API and
// a stream of inbound calls through the balancer. Each instance in turn is sent SIGTERM and, once it
// has exited, started again at the same address and put back in the balancer before the next one
// goes. Nothing takes the draining instance out of the balancer (the readiness watch does not run
// while it drains), so it keeps receiving webhooks until it exits: it must prepare those calls on a
// ready peer rather than decline them. Needs nginx
// and Redis; skipped, saying so, without.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { simulatedCallee } from '../../src/sim/callee/answer.js';
import { calleeFor, expectedOutcome } from '../../src/sim/callee/plan.js';
import { type SimulatedCarrierApi, startSimulatedCarrierApi } from '../../src/sim/carrier-api/server.js';
import { type FakeAgent, startFakeAgent } from '../helpers/fake-agent.js';
import { type Balancer, NGINX, startBalancer } from '../helpers/nginx.js';
import { deleteKeys, REDIS_URL, redisAvailable } from '../helpers/redis.js';
import {
  disposeAll,
  ensureBuilt,
  freePort,
  type ServerProcess,
  spawnServer,
} from '../helpers/server-process.js';
import { newCallSid, openMediaStream, voiceWebhook } from '../helpers/twilio-carrier.js';
import { simulatedCalleeEnv } from '../helpers/simulation.js';

const hasRedis = await redisAvailable();
const skip = !NGINX || !hasRedis;
if (skip) {
  console.warn(
    `skipping test/fleet/rolling-deploy.test.ts: ${NGINX ? `no Redis answers at ${REDIS_URL}` : 'nginx not found (apt-get install nginx)'}`,
  );
}

const NAMES = ['roll-1', 'roll-2', 'roll-3'] as const;
const ADMIN_TOKEN = 'rolling-deploy-admin-token-0123456789';
const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };

interface InboundCall {
  callSid: string;
  declined: boolean;
  /** The webhook's answer, for a failure message. */
  answer: string;
  /** The instance the media URL named. */
  instance: string | null;
  reachedAgent: boolean;
}

describe.skipIf(skip)('a rolling deploy behind nginx during a campaign and inbound calls', () => {
  const prefix = `cbtest-rolling-${randomBytes(4).toString('hex')}:`;
  const servers = new Map<string, ServerProcess>();
  const ports = new Map<string, number>();
  let env: Record<string, string>;
  let agent: FakeAgent;
  let carrier: SimulatedCarrierApi;
  let balancer: Balancer;
  const placed: string[] = [];
  /** Every process started, restarts included, for the log lines of a failure. */
  const all: ServerProcess[] = [];
  const declines = () =>
    all.flatMap((server) =>
      server
        .output()
        .split('\n')
        .filter((line) => line.includes('call declined')),
    );

  /** The instances' log lines about campaigns and attempts, for a campaign that does not complete. */
  const campaignLog = () =>
    all
      .flatMap((server) =>
        server
          .output()
          .split('\n')
          .filter((line) => /attempt|campaign|dialer/i.test(line)),
      )
      .slice(-80)
      .join('\n');

  beforeAll(async () => {
    await ensureBuilt();
    agent = await startFakeAgent({ autoApply: true });
    const callee = simulatedCallee({
      timeScale: 1 / 10,
      env: simulatedCalleeEnv('rolling-deploy-stream-token-secret-0000'),
    });
    carrier = await startSimulatedCarrierApi({
      onPlaced: (call, log) => {
        placed.push(call.to);
        callee(call, log);
      },
    });
    const balancerPort = await freePort();
    env = {
      AGENT_URL: agent.url,
      AGENT_API_KEY: 'key',
      REDIS_URL,
      REDIS_KEY_PREFIX: prefix,
      PUBLIC_URL: `http://127.0.0.1:${balancerPort}`,
      TRUST_PROXY: '127.0.0.1',
      STREAM_TOKEN_SECRET: 'rolling-deploy-stream-token-secret-0000',
      ADMIN_TOKEN,
      SIM_CARRIER_API_URL: carrier.url,
      DRAIN_TIMEOUT_MS: '20000',
      ANALYSIS: 'off',
    };
    for (const name of NAMES) ports.set(name, await freePort());
    const started = await Promise.all(
      NAMES.map((name) => spawnServer({ ...env, INSTANCE_ID: name }, { port: ports.get(name)! })),
    );
    started.forEach((server, i) => servers.set(NAMES[i]!, server));
    all.push(...started);
    balancer = await startBalancer(
      NAMES.map((name) => ({ name, address: `127.0.0.1:${ports.get(name)!}` })),
      { port: balancerPort },
    );
  }, 120_000);

  afterAll(async () => {
    await balancer?.stop();
    await disposeAll();
    await agent?.close();
    await carrier?.close();
    await deleteKeys(prefix);
  });

  /** An inbound call as the carrier places it, through the balancer; hung up once the agent has it. */
  const inboundCall = async (): Promise<InboundCall> => {
    const callSid = newCallSid();
    const params = { CallSid: callSid, From: '+15005550006', To: '+15005550001' };
    // A reload of nginx closes its idle client connections; a request sent on one as it closes
    // never reached callbridge, and is sent again, as a carrier does with a dropped connection.
    const answer = await voiceWebhook(balancer.baseUrl, params).catch((err: Error) => {
      if ((err.cause as { code?: string } | undefined)?.code !== 'UND_ERR_SOCKET') throw err;
      return voiceWebhook(balancer.baseUrl, params);
    });
    if (!answer.body.includes('<Connect><Stream')) {
      const said = `${answer.status} ${answer.body.slice(0, 300)}`;
      return { callSid, declined: true, answer: said, instance: null, reachedAgent: false };
    }
    const instance = /^\/media\/twilio\/([^/]+)\//.exec(new URL(answer.streamUrl).pathname)?.[1] ?? null;
    const stream = await openMediaStream(answer.streamUrl, { callSid });
    stream.start(answer.parameters);
    const tagged = () =>
      agent.connections.some((conn) =>
        conn.messages.some((m) => m.type === 'Settings' && (m.tags as string[]).includes(`call:${callSid}`)),
      );
    const deadline = Date.now() + 15_000;
    while (!tagged() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    stream.stop();
    stream.ws.close();
    return { callSid, declined: false, answer: '', instance, reachedAgent: tagged() };
  };

  /** A call answered by `server` itself, its stream through the balancer; live until stopped. */
  const holdCall = async (server: ServerProcess) => {
    const callSid = newCallSid();
    const answer = await voiceWebhook(server.baseUrl, {
      CallSid: callSid,
      From: '+15005550007',
      To: '+15005550001',
    });
    expect(answer.body).toContain('<Connect><Stream');
    const stream = await openMediaStream(answer.streamUrl, { callSid });
    stream.start(answer.parameters);
    await expect
      .poll(() =>
        agent.connections.some((conn) =>
          conn.messages.some(
            (m) => m.type === 'Settings' && (m.tags as string[]).includes(`call:${callSid}`),
          ),
        ),
      )
      .toBe(true);
    return stream;
  };

  it('dials every contact once, declines no inbound call, and completes the results', async () => {
    // Invariant: a deploy refuses no call. A draining instance prepares a new call on a ready peer,
    // its dialer claims nothing more and its attempts finish through the shared store.
    const numbers = Array.from({ length: 36 }, (_, i) => {
      const tail = (i % 2 ? 70 : 90) + (i % 10);
      return `+1${['212', '646', '718'][i % 3]}56${String(i).padStart(3, '0')}${tail}`;
    });
    const created = await fetch(`${balancer.baseUrl}/v1/campaigns`, {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({
        name: 'rolling',
        pacing: { callsPerSecond: 2, maxConcurrent: 10 },
        retry: { maxAttempts: 1, delaySeconds: 0, on: ['busy'] },
        breaker: { failureShare: 1 },
      }),
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const upload = await fetch(`${balancer.baseUrl}/v1/campaigns/${id}/contacts`, {
      method: 'POST',
      headers: { ...admin, 'content-type': 'text/csv' },
      body: `phone\n${numbers.join('\n')}\n`,
    });
    expect(upload.status).toBe(200);
    expect(
      (
        await fetch(`${balancer.baseUrl}/v1/campaigns/${id}/start`, {
          method: 'POST',
          headers: admin,
          body: '{}',
        })
      ).status,
    ).toBe(200);

    // Inbound calls, one after another, for as long as the deploy runs.
    const inbound: InboundCall[] = [];
    let deploying = true;
    const caller = (async () => {
      while (deploying) {
        inbound.push(await inboundCall());
        await new Promise((resolve) => setTimeout(resolve, 150));
      }
    })();

    for (const name of NAMES) {
      // A call on the instance keeps its drain going for two seconds: webhooks keep reaching it.
      const held = await holdCall(servers.get(name)!);
      const exited = servers.get(name)!.kill('SIGTERM');
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      held.stop();
      held.ws.close();
      const exit = await exited;
      expect(exit.code, servers.get(name)!.output().slice(-3000)).toBe(0);
      const restarted = await spawnServer({ ...env, INSTANCE_ID: name }, { port: ports.get(name)! });
      servers.set(name, restarted);
      all.push(restarted);
      // As the readiness watch does (render.mjs --watch): the restarted instance, ready again, is
      // back in the balancer (a reload forgets the failures its stop caused) before the next goes.
      // It never runs while an instance drains, so the draining one keeps receiving webhooks.
      // The watch reloads nginx on each change it sees (the instance down while it drained, up
      // again now); run only now, it sees none, so the reload is asked for here.
      await balancer.syncReadiness();
      balancer.reload();
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
    deploying = false;
    await caller;

    // No inbound call was declined, and every one reached the agent.
    expect(inbound.length).toBeGreaterThan(5);
    const declined = inbound.filter((c) => c.declined);
    expect(
      declined.map((c) => c.answer),
      `${declines().join('\n')}\n${balancer
        .errorLog()
        .replace(/, client: [^\n]*/g, '')
        .slice(0, 4000)}`,
    ).toEqual([]);
    expect(inbound.filter((c) => !c.reachedAgent).map((c) => c.callSid)).toEqual([]);
    // Draining instances did receive new calls, and prepared them on a ready peer.
    const handedOver = all.filter((server) => server.output().includes('call prepared for a ready peer'));
    expect(handedOver.length).toBeGreaterThan(0);

    // The campaign completes, every contact dialed exactly once with the outcome its number plans.
    const deadline = Date.now() + 90_000;
    let state = '';
    while (state !== 'completed' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      const res = await fetch(`${balancer.baseUrl}/v1/campaigns/${id}`, { headers: admin });
      if (res.ok) state = ((await res.json()) as { state: string }).state;
    }
    const page = (await (
      await fetch(`${balancer.baseUrl}/v1/campaigns/${id}/contacts?limit=200`, { headers: admin })
    ).json()) as { contacts: Array<{ phone: string; state: string; outcome: string; attempts: unknown[] }> };
    const unfinished = page.contacts.filter((contact) => contact.state !== 'done');
    expect(state, `${JSON.stringify(unfinished, null, 1)}\n${campaignLog()}`).toBe('completed');
    expect([...placed].sort()).toEqual([...numbers].sort());
    expect(page.contacts).toHaveLength(numbers.length);
    for (const contact of page.contacts) {
      expect(contact, contact.phone).toMatchObject({
        state: 'done',
        outcome: expectedOutcome(calleeFor(contact.phone), 'off'),
      });
      expect(contact.attempts, contact.phone).toHaveLength(1);
    }
    const csv = await fetch(`${balancer.baseUrl}/v1/campaigns/${id}/results.csv`, { headers: admin });
    expect(csv.status).toBe(200);
    expect((await csv.text()).trim().split('\n')).toHaveLength(numbers.length + 1);
  }, 240_000);
});
