// The fleet as operators run it on plain hosts: three `node dist/main.js` processes sharing Redis
// behind the real nginx configured by deploy/nginx/render.mjs, carriers and operators reaching them
// only through the balancer. Calls spread over the instances and every stream meets the agent
// pre-warmed for it; any instance lists, follows and hangs up any call; the webhook gateway forwards
// a delivery once whichever instances it reaches; an instance sent SIGTERM finishes its calls while
// new calls go to the others; one killed with SIGKILL takes only its own calls down, and they leave
// the live-call directory. Needs nginx (Debian's package) and Redis; skipped, saying so, without.
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AgentConnection, type FakeAgent, startFakeAgent } from '../helpers/fake-agent.js';
import { type Balancer, NGINX, startBalancer } from '../helpers/nginx.js';
import { deleteKeys, REDIS_URL, redisAvailable } from '../helpers/redis.js';
import {
  disposeAll,
  ensureBuilt,
  freePort,
  metricSum,
  metrics,
  type ServerProcess,
  spawnServer,
  status,
} from '../helpers/server-process.js';
import {
  type CarrierStreamClient,
  newCallSid,
  openMediaStream,
  voiceWebhook,
} from '../helpers/twilio-carrier.js';
import { hmacOf } from '../webhooks/helpers.js';
import { type FixedPortGateway, operatorGatewayAt } from '../webhooks/operator-at.js';
import { readFeed } from './feed.js';

const hasRedis = await redisAvailable();
const skip = !NGINX || !hasRedis;
if (skip) {
  console.warn(
    `skipping test/fleet/balancer.test.ts: ${NGINX ? `no Redis answers at ${REDIS_URL}` : 'nginx not found (apt-get install nginx)'}`,
  );
}

const NAMES = ['fleet-1', 'fleet-2', 'fleet-3'] as const;
const ADMIN_TOKEN = 'fleet-balancer-admin-token-0123456789';
const DEPLOY_SECRET = 'fleet-balancer-deploy-secret';
const FRAME_BYTES = 160;
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

interface FleetCall {
  callSid: string;
  instance: string;
  stream: CarrierStreamClient;
  agent: AgentConnection;
  observer: string;
}

const TWILIO_TOKEN = 'balancer-test-twilio-auth-token-0001';

describe.skipIf(skip)('three instances behind the nginx balancer', () => {
  const prefix = `cbtest-balancer-${randomBytes(4).toString('hex')}:`;
  const instances = new Map<string, ServerProcess>();
  const calls: FleetCall[] = [];
  let agent: FakeAgent;
  let balancer: Balancer;
  let operator: FixedPortGateway;

  beforeAll(async () => {
    await ensureBuilt();
    agent = await startFakeAgent({ autoApply: true });
    const balancerPort = await freePort();
    const operatorPort = await freePort();
    operator = await operatorGatewayAt(operatorPort);
    const env = {
      AGENT_URL: agent.url,
      AGENT_API_KEY: 'key',
      REDIS_URL,
      REDIS_KEY_PREFIX: prefix,
      PUBLIC_URL: `http://127.0.0.1:${balancerPort}`,
      TRUST_PROXY: '127.0.0.1',
      STREAM_TOKEN_SECRET: 'fleet-balancer-stream-token-secret-00000',
      ADMIN_TOKEN,
      WEBHOOK_SECRET_DEPLOY: DEPLOY_SECRET,
      OPERATOR_GATEWAY_URL: `http://127.0.0.1:${operatorPort}/events`,
      DRAIN_TIMEOUT_MS: '60000',
      // Signed webhooks: only a verified one pre-warms its agent and gets an observer token.
      TWILIO_ACCOUNT_SID: `AC${'b'.repeat(32)}`,
      TWILIO_AUTH_TOKEN: TWILIO_TOKEN,
      TWILIO_API_URL: 'http://127.0.0.1:9',
    };
    const started = await Promise.all(NAMES.map((name) => spawnServer({ ...env, INSTANCE_ID: name })));
    started.forEach((server, i) => instances.set(NAMES[i]!, server));
    balancer = await startBalancer(
      NAMES.map((name) => ({ name, address: new URL(instances.get(name)!.baseUrl).host })),
      { port: balancerPort },
    );
  }, 120_000);

  afterAll(async () => {
    for (const call of calls) call.stream.ws.terminate();
    await balancer?.stop();
    await disposeAll();
    await agent?.close();
    await operator?.close();
    await deleteKeys(prefix);
  });

  /** The agent session dialed for `callSid` (its Settings name the call). */
  const agentFor = async (callSid: string): Promise<AgentConnection> => {
    const tagged = () =>
      agent.connections.filter((conn) =>
        conn.messages.some((m) => m.type === 'Settings' && (m.tags as string[]).includes(`call:${callSid}`)),
      );
    await expect.poll(() => tagged().length).toBeGreaterThan(0);
    return tagged()[0]!;
  };

  /** A call placed the way a carrier places it, through the balancer, live once audio flows both ways. */
  const placeCall = async (): Promise<FleetCall> => {
    const callSid = newCallSid();
    const answer = await voiceWebhook(
      balancer.baseUrl,
      { CallSid: callSid, From: '+15005550006', To: '+15005550001' },
      { authToken: TWILIO_TOKEN },
    );
    expect(answer.body, 'a call through the balancer is never declined').toContain('<Connect><Stream');
    const url = new URL(answer.streamUrl);
    expect(url.host).toBe(new URL(balancer.baseUrl).host);
    const instance = /^\/media\/twilio\/([^/]+)\//.exec(url.pathname)![1]!;
    const conn = await agentFor(callSid);
    const stream = await openMediaStream(answer.streamUrl, { callSid, authToken: TWILIO_TOKEN });
    stream.start(answer.parameters);
    const call = { callSid, instance, stream, agent: conn, observer: answer.observer! };
    calls.push(call);
    await talk(call);
    return call;
  };

  /** Caller audio reaches the agent and agent audio reaches the caller, byte for byte. */
  const talk = async (call: FleetCall) => {
    const up = randomBytes(FRAME_BYTES * 2);
    const upBefore = call.agent.audioBytes().length;
    call.stream.media(up.subarray(0, FRAME_BYTES));
    call.stream.media(up.subarray(FRAME_BYTES));
    expect((await call.agent.waitForAudio(upBefore + up.length)).subarray(upBefore).equals(up)).toBe(true);
    const down = randomBytes(FRAME_BYTES * 3);
    const downBefore = call.stream.audio().length;
    call.agent.sendAudio(down);
    expect((await call.stream.waitForAudio(downBefore + down.length)).subarray(downBefore).equals(down)).toBe(
      true,
    );
  };

  const live = async (at: string): Promise<Array<{ callSid: string; instance: string }>> => {
    const res = await fetch(`${at}/v1/calls?live=true`, { headers: admin });
    expect(res.status).toBe(200);
    return ((await res.json()) as { calls: Array<{ callSid: string; instance: string }> }).calls;
  };
  const liveOn = async (at: string) => (await live(at)).map((c) => `${c.callSid}@${c.instance}`).sort();
  const expected = (list: FleetCall[]) => list.map((c) => `${c.callSid}@${c.instance}`).sort();
  const sumOver = async (names: readonly string[], metric: string, label?: string) => {
    let sum = 0;
    for (const name of names) sum += metricSum(await metrics(instances.get(name)!.baseUrl), metric, label);
    return sum;
  };

  it('spreads calls over every instance, each stream meeting the agent pre-warmed for it', async () => {
    const placed: FleetCall[] = [];
    for (let i = 0; i < 9; i++) placed.push(await placeCall());
    const perInstance = Object.fromEntries(
      NAMES.map((n) => [n, placed.filter((c) => c.instance === n).length]),
    );
    for (const name of NAMES) expect(perInstance[name], JSON.stringify(perInstance)).toBeGreaterThan(0);
    // One agent session per call: the pre-warmed one, adopted on the instance that dialed it.
    expect(agent.connections).toHaveLength(9);
    expect(await sumOver(NAMES, 'callbridge_stream_prewarm_total', 'outcome="used"')).toBe(9);
    expect(await sumOver(NAMES, 'callbridge_stream_prewarm_total', 'outcome="other_instance"')).toBe(0);
    expect(await sumOver(NAMES, 'callbridge_calls_active')).toBe(9);
    // Every instance, and the balancer, lists all nine where they run.
    for (const at of [balancer.baseUrl, ...NAMES.map((n) => instances.get(n)!.baseUrl)]) {
      await expect.poll(() => liveOn(at)).toEqual(expected(placed));
    }
  }, 60_000);

  it('follows and hangs up a call from instances that do not carry it', async () => {
    const call = calls[0]!;
    const others = NAMES.filter((n) => n !== call.instance);
    const res = await fetch(`${instances.get(others[0]!)!.baseUrl}/calls/${call.callSid}/events`, {
      headers: { authorization: `Bearer ${call.observer}` },
    });
    expect(res.status).toBe(200);
    const feed = readFeed(res);
    // And through the balancer, on whichever instance it picks, with the admin token.
    const viaBalancer = await fetch(`${balancer.baseUrl}/calls/${call.callSid}/events`, { headers: admin });
    expect(viaBalancer.status).toBe(200);
    const balancedFeed = readFeed(viaBalancer);
    call.agent.send({ type: 'ConversationText', role: 'assistant', content: 'How can I help?' });
    await expect.poll(() => feed.events.length).toBe(1);
    await expect.poll(() => balancedFeed.events.length).toBe(1);

    const hangup = await fetch(`${instances.get(others[1]!)!.baseUrl}/v1/calls/${call.callSid}/hangup`, {
      method: 'POST',
      headers: admin,
    });
    expect(hangup.status).toBe(200);
    expect(await hangup.json()).toEqual({ callSid: call.callSid, instance: call.instance });
    expect(await call.stream.closed).toEqual({ code: 1000, reason: 'call ended' });
    const events = [
      { type: 'transcript', role: 'assistant', content: 'How can I help?' },
      { type: 'end', reason: 'operator_hangup' },
    ];
    expect(await feed.done).toEqual(events);
    expect(await balancedFeed.done).toEqual(events);
    calls.splice(calls.indexOf(call), 1);
    await expect.poll(() => liveOn(balancer.baseUrl)).toEqual(expected(calls));
  }, 30_000);

  it('forwards a webhook delivery once, whichever instances it reaches', async () => {
    const id = `dep-${randomUUID()}`;
    const body = JSON.stringify({ id, type: 'deployment.succeeded' });
    const send = (base: string) =>
      fetch(`${base}/webhooks/deploy`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-deploy-signature': hmacOf('sha1', DEPLOY_SECRET, body).toString('hex'),
        },
        body,
      });
    const bases = [balancer.baseUrl, ...NAMES.map((n) => instances.get(n)!.baseUrl)];
    const first = await Promise.all(bases.map(send));
    // One forwards it; any other answers duplicate, or 503 while the first is still in progress.
    expect(first.filter((r) => r.status === 200).length).toBeGreaterThanOrEqual(1);
    for (const res of first) expect([200, 503]).toContain(res.status);
    // The provider's retries of those, once the first has answered, are all duplicates.
    for (const base of bases) expect(await (await send(base)).json()).toEqual({ status: 'duplicate' });
    expect(operator.received.filter((r) => r.key.includes(id))).toHaveLength(1);
  }, 30_000);

  it('drains an instance sent SIGTERM: its calls go on to their end while new calls go to the others, none refused', async () => {
    const draining = NAMES[1];
    const server = instances.get(draining)!;
    const itsCalls = calls.filter((c) => c.instance === draining);
    expect(itsCalls.length).toBeGreaterThan(0);
    server.child.kill('SIGTERM');
    await expect.poll(() => status(server.baseUrl, '/readyz')).toBe(503);
    // The readiness watch of deploy/nginx takes it out of the webhook rotation.
    const probed = await balancer.syncReadiness();
    expect(probed.find((i) => i.name === draining)?.ready).toBe(false);

    const fresh: FleetCall[] = [];
    for (let i = 0; i < 6; i++) fresh.push(await placeCall());
    expect(fresh.filter((c) => c.instance === draining)).toEqual([]);
    expect(new Set(fresh.map((c) => c.instance)).size).toBe(2);
    for (const call of itsCalls) await talk(call);
    expect(server.child.exitCode).toBeNull();

    for (const call of itsCalls) {
      call.stream.stop();
      expect(await call.stream.closed).toEqual({ code: 1000, reason: 'stream stopped' });
      calls.splice(calls.indexOf(call), 1);
    }
    expect(await server.exited).toMatchObject({ code: 0, signal: null });
    await expect.poll(() => liveOn(balancer.baseUrl)).toEqual(expected(calls));
  }, 60_000);

  it('loses only the calls of an instance killed with SIGKILL, which leave the live directory within seconds', async () => {
    const killed = NAMES[2];
    const survivor = NAMES[0];
    const dead = calls.filter((c) => c.instance === killed);
    const alive = calls.filter((c) => c.instance === survivor);
    expect(dead.length).toBeGreaterThan(0);
    expect(alive.length).toBeGreaterThan(0);

    await instances.get(killed)!.kill('SIGKILL');
    // The carrier sees those streams drop; nothing else does.
    for (const call of dead) await call.stream.closed;
    for (const call of alive) await talk(call);
    await expect
      .poll(() => liveOn(instances.get(survivor)!.baseUrl), { timeout: 10_000 })
      .toEqual(expected(alive));
    for (const call of alive) expect(call.stream.ws.readyState).toBe(call.stream.ws.OPEN);
    // Admin controls of a dead instance's call find nothing to act on.
    const res = await fetch(`${balancer.baseUrl}/v1/calls/${dead[0]!.callSid}/hangup`, {
      method: 'POST',
      headers: admin,
    });
    expect(res.status).toBe(404);
    // The survivor still takes new calls through the balancer.
    const after = await placeCall();
    expect(after.instance).toBe(survivor);
  }, 60_000);
});
