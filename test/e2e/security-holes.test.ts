// Issue 30's holes, tried against the real process in production mode (`node dist/main.js`,
// NODE_ENV=production, signed Twilio webhooks): a session never outlives its credential and every
// stream it (or its key) opened closes within a second of the credential ending; a viewer cannot
// listen by reading a live call's recording; a recording deleted mid-call stops there; a replayed
// signed voice webhook gains nothing; audit entries name keys by id, and key names cannot pass for
// the server's own.
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { writeConfigDir } from '../helpers/config-dir.js';
import { type AgentConnection, type FakeAgent, startFakeAgent } from '../helpers/fake-agent.js';
import { disposeAll, ensureBuilt, type ServerProcess, spawnServer } from '../helpers/server-process.js';
import { readEvents } from '../helpers/sse.js';
import {
  type CarrierStreamClient,
  newCallSid,
  openMediaStream,
  voiceWebhook,
} from '../helpers/twilio-carrier.js';
import { type FakeOperatorGateway, startFakeOperatorGateway, waitUntil } from '../webhooks/helpers.js';

const ADMIN_TOKEN = 'admin-token-of-the-security-holes-test-1';
const TWILIO_TOKEN = 'twilio-auth-token-of-the-security-test';
const SIGNED = { authToken: TWILIO_TOKEN };
/** "Within a second", with room for a loaded 2-core machine to schedule the close. */
const CLOSED_WITHIN_MS = 1_000;

let agent: FakeAgent;
let operator: FakeOperatorGateway;
let configDir: string;
const carriers: CarrierStreamClient[] = [];
const timers: NodeJS.Timeout[] = [];

function productionEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    ADMIN_TOKEN,
    AGENT_URL: agent.url,
    AGENT_API_KEY: 'security-test-agent-key',
    TWILIO_ACCOUNT_SID: `AC${'5'.repeat(32)}`,
    TWILIO_AUTH_TOKEN: TWILIO_TOKEN,
    TWILIO_API_URL: 'http://127.0.0.1:9',
    CONFIG_DIR: configDir,
    OPERATOR_GATEWAY_URL: `${operator.url}/events`,
    OPERATOR_GATEWAY_SECRET: 'operator-secret-of-the-security-test',
    ...extra,
  };
}

beforeAll(async () => {
  await ensureBuilt();
  agent = await startFakeAgent({ autoApply: true });
  operator = await startFakeOperatorGateway();
  configDir = writeConfigDir({
    support: {
      prompt: 'You answer the phone.',
      think: { provider: { type: 'open_ai', model: 'gpt-4o-mini' } },
      recording: { enabled: true, consent: null, retentionDays: 7 },
    },
  });
}, 180_000);

afterEach(() => {
  for (const timer of timers.splice(0)) clearInterval(timer);
  for (const carrier of carriers.splice(0)) carrier.ws.terminate();
});

afterAll(async () => {
  await disposeAll();
  await agent?.close();
  await operator?.close();
  rmSync(configDir, { recursive: true, force: true });
});

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

async function api(server: ServerProcess, method: string, path: string, key: string, body?: unknown) {
  const res = await fetch(`${server.baseUrl}/v1${path}`, {
    method,
    headers: { ...bearer(key), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

async function newKey(
  server: ServerProcess,
  name: string,
  role: string,
): Promise<{ id: string; key: string }> {
  const made = await api(server, 'POST', '/keys', ADMIN_TOKEN, { name, role });
  expect(made.status, JSON.stringify(made.json)).toBe(201);
  return made.json as { id: string; key: string };
}

/** Signs in with `key`: the session cookie and its anti-forgery token. */
async function signIn(server: ServerProcess, key: string): Promise<{ cookie: string; csrf: string }> {
  const res = await fetch(`${server.baseUrl}/v1/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ key }),
  });
  expect(res.status).toBe(200);
  const cookie = /^(callbridge_session=[^;]+)/.exec(res.headers.get('set-cookie') ?? '')![1]!;
  return { cookie, csrf: ((await res.json()) as { csrf: string }).csrf };
}

/** A signed inbound call, its stream open, the caller speaking every 20 ms, the agent answering. */
async function liveCall(
  server: ServerProcess,
): Promise<{ callSid: string; carrier: CarrierStreamClient; conn: AgentConnection }> {
  const callSid = newCallSid();
  const answer = await voiceWebhook(
    server.baseUrl,
    { CallSid: callSid, From: '+15005550006', To: '+15005550001' },
    SIGNED,
  );
  expect(answer.body).toContain('<Connect><Stream');
  const conn = await agent.nextConnection();
  const carrier = await openMediaStream(answer.streamUrl, { callSid, ...SIGNED });
  carriers.push(carrier);
  carrier.start(answer.parameters);
  timers.push(setInterval(() => carrier.media(Buffer.alloc(160, 0x11)), 20));
  await conn.waitForAudio(1600);
  return { callSid, carrier, conn };
}

/** Waits until the file store has written some of the live call's audio (it writes every 2 s). */
async function recordedBytes(server: ServerProcess, callSid: string): Promise<void> {
  const file = join(server.dataDir, 'recordings', `${callSid}.wav`);
  await expect
    .poll(() => statSync(file, { throwIfNoEntry: false })?.size ?? 0, { timeout: 10_000 })
    .toBeGreaterThan(44 + 3_200);
}

/** Milliseconds from now until `closed` settles, or a failure past `limitMs`. */
async function closesWithin(closed: Promise<unknown>, what: string, limitMs = 5_000): Promise<number> {
  const startedMs = performance.now();
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    closed,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} still open after ${limitMs} ms`)), limitMs);
    }),
  ]).finally(() => clearTimeout(timer));
  return performance.now() - startedMs;
}

describe('a production server', () => {
  let server: ServerProcess;

  beforeAll(async () => {
    server = await spawnServer(productionEnv());
  }, 60_000);

  it("closes a deleted key's live-calls feed, call events and listen-in, and a signed-out session's feed, within a second", async () => {
    const viewer = await newKey(server, 'night viewer', 'viewer');
    const ops = await newKey(server, 'night ops', 'operator');
    const other = await newKey(server, 'day viewer', 'viewer');
    const { callSid } = await liveCall(server);

    const liveFeed = await readEvents(`${server.baseUrl}/v1/calls/live/events`, bearer(viewer.key));
    const session = await signIn(server, viewer.key);
    const callFeed = await readEvents(`${server.baseUrl}/v1/calls/${callSid}/events`, {
      cookie: session.cookie,
    });
    const otherSession = await signIn(server, other.key);
    const otherFeed = await readEvents(`${server.baseUrl}/v1/calls/live/events`, {
      cookie: otherSession.cookie,
    });
    expect([liveFeed.status, callFeed.status, otherFeed.status]).toEqual([200, 200, 200]);

    const listener = new WebSocket(`${server.baseUrl.replace(/^http/, 'ws')}/v1/calls/${callSid}/listen`, {
      headers: bearer(ops.key),
    });
    let audioBytes = 0;
    listener.on('message', (data: Buffer, isBinary: boolean) => {
      if (isBinary) audioBytes += data.length;
    });
    const listenClosed = new Promise<number>((resolve) => listener.on('close', (code) => resolve(code)));
    await waitUntil(() => audioBytes > 3_200, 10_000, 'live audio on the listen-in socket');

    // The keys go: every stream they opened closes within a second, though the call goes on.
    expect((await api(server, 'DELETE', `/keys/${viewer.id}`, ADMIN_TOKEN)).status).toBe(204);
    expect((await api(server, 'DELETE', `/keys/${ops.id}`, ADMIN_TOKEN)).status).toBe(204);
    expect(await closesWithin(liveFeed.done, 'the live-calls feed')).toBeLessThan(CLOSED_WITHIN_MS);
    expect(await closesWithin(callFeed.done, "the call's event stream")).toBeLessThan(CLOSED_WITHIN_MS);
    expect(await closesWithin(listenClosed, 'the listen-in socket')).toBeLessThan(CLOSED_WITHIN_MS);
    expect(await listenClosed).toBe(1008);
    const heardAtClose = audioBytes;
    // The deleted keys and their session are refused from then on.
    expect((await api(server, 'GET', '/calls?live=true', viewer.key)).status).toBe(401);
    const stale = await fetch(`${server.baseUrl}/v1/calls?live=true`, {
      headers: { cookie: session.cookie },
    });
    expect(stale.status).toBe(401);

    // Signing out ends the session's own feed the same way; another key's streams are untouched.
    await waitUntil(() => otherFeed.events.length > 0, 5_000, "the other key's snapshot");
    const out = await fetch(`${server.baseUrl}/v1/session`, {
      method: 'DELETE',
      headers: { cookie: otherSession.cookie, 'x-callbridge-csrf': otherSession.csrf },
    });
    expect(out.status).toBe(204);
    expect(await closesWithin(otherFeed.done, 'the signed-out feed')).toBeLessThan(CLOSED_WITHIN_MS);
    expect(audioBytes).toBe(heardAtClose);
  });

  it('ends every session with DELETE /v1/sessions, ADMIN_TOKEN sessions included', async () => {
    const admin = await signIn(server, ADMIN_TOKEN);
    const viewer = await newKey(server, 'sessions viewer', 'viewer');
    const viewerSession = await signIn(server, viewer.key);
    const feed = await readEvents(`${server.baseUrl}/v1/calls/live/events`, { cookie: viewerSession.cookie });
    expect(feed.status).toBe(200);
    const ended = await fetch(`${server.baseUrl}/v1/sessions`, {
      method: 'DELETE',
      headers: { cookie: admin.cookie, 'x-callbridge-csrf': admin.csrf },
    });
    expect(ended.status).toBe(204);
    expect(await closesWithin(feed.done, "the viewer's feed")).toBeLessThan(CLOSED_WITHIN_MS);
    for (const cookie of [admin.cookie, viewerSession.cookie]) {
      expect((await fetch(`${server.baseUrl}/v1/session`, { headers: { cookie } })).status).toBe(401);
    }
    // Keys themselves still work: sessions ended, not keys.
    expect((await api(server, 'GET', '/calls?live=true', viewer.key)).status).toBe(200);
    // Only an admin may end them all.
    expect((await api(server, 'DELETE', '/sessions', viewer.key)).status).toBe(403);
  });

  it("refuses a viewer a live call's recording, lets an operator read it audited, and the viewer once it ended", async () => {
    const viewer = await newKey(server, 'recording viewer', 'viewer');
    const ops = await newKey(server, 'recording ops', 'operator');
    const { callSid, carrier } = await liveCall(server);
    await recordedBytes(server, callSid);
    const range = { range: 'bytes=44-' };
    const refused = await fetch(`${server.baseUrl}/v1/calls/${callSid}/recording`, {
      headers: { ...bearer(viewer.key), ...range },
    });
    expect(refused.status).toBe(403);
    const read = await fetch(`${server.baseUrl}/v1/calls/${callSid}/recording`, {
      headers: { ...bearer(ops.key), ...range },
    });
    expect(read.status).toBe(206);
    expect((await read.arrayBuffer()).byteLength).toBeGreaterThan(0);
    const audit = await api(server, 'GET', '/audit?limit=20', ADMIN_TOKEN);
    const entries = audit.json.entries as Array<Record<string, unknown>>;
    const reads = entries.filter((e) => e.action === 'recording.read' && e.target === callSid);
    expect(reads).toEqual([
      expect.objectContaining({
        keyId: ops.id,
        keyName: 'recording ops',
        role: 'operator',
        detail: { live: true },
      }),
    ]);

    for (const timer of timers.splice(0)) clearInterval(timer);
    carrier.stop();
    await carrier.closed;
    await expect
      .poll(async () => (await api(server, 'GET', `/calls/${callSid}`, viewer.key)).json.recording, {
        timeout: 15_000,
      })
      .toMatchObject({ state: 'ready' });
    const afterwards = await fetch(`${server.baseUrl}/v1/calls/${callSid}/recording`, {
      headers: bearer(viewer.key),
    });
    expect(afterwards.status).toBe(200);
    const again = await api(server, 'GET', '/audit?limit=20', ADMIN_TOKEN);
    expect(
      (again.json.entries as Array<Record<string, unknown>>).filter(
        (e) => e.action === 'recording.read' && e.keyId === viewer.id,
      ),
    ).toHaveLength(1);
  });

  it('stops a recording deleted during its call: nothing more written, the record says deleted, no recording.ready', async () => {
    const ops = await newKey(server, 'deleting ops', 'operator');
    const { callSid, carrier } = await liveCall(server);
    await recordedBytes(server, callSid);
    expect((await api(server, 'DELETE', `/calls/${callSid}/recording`, ops.key)).status).toBe(204);
    const gone = await fetch(`${server.baseUrl}/v1/calls/${callSid}/recording`, { headers: bearer(ops.key) });
    expect(gone.status).toBe(404);
    // The call goes on past another write period (every 2 s): nothing comes back on disk.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(existsSync(join(server.dataDir, 'recordings', `${callSid}.wav`))).toBe(false);
    expect(
      (await fetch(`${server.baseUrl}/v1/calls/${callSid}/recording`, { headers: bearer(ops.key) })).status,
    ).toBe(404);
    for (const timer of timers.splice(0)) clearInterval(timer);
    carrier.stop();
    await carrier.closed;
    await waitUntil(
      () =>
        operator.requests.some(
          (r) =>
            r.json.name === 'calls/call.ended' &&
            (r.json.payload as { callSid?: string }).callSid === callSid,
        ),
      15_000,
      'calls/call.ended',
    );
    await expect
      .poll(async () => (await api(server, 'GET', `/calls/${callSid}`, ops.key)).json.recording, {
        timeout: 15_000,
      })
      .toMatchObject({ state: 'deleted' });
    expect(
      (await fetch(`${server.baseUrl}/v1/calls/${callSid}/recording`, { headers: bearer(ops.key) })).status,
    ).toBe(404);
    const readies = operator.requests.filter(
      (r) =>
        r.json.name === 'calls/recording.ready' &&
        (r.json.payload as { callSid?: string }).callSid === callSid,
    );
    expect(readies).toEqual([]);
  });

  it('names keys by id in the audit log, and refuses names that are reserved, taken or unprintable', async () => {
    for (const name of [
      'admin-token',
      'CLI',
      'ops\n2030-01-01  admin  admin-token',
      'evil\u202enimda',
      'zero\u200bwidth',
    ]) {
      const refused = await api(server, 'POST', '/keys', ADMIN_TOKEN, { name, role: 'viewer' });
      expect(refused.status, JSON.stringify(name)).toBe(400);
    }
    const first = await newKey(server, 'Audit Ops', 'operator');
    expect(
      (await api(server, 'POST', '/keys', ADMIN_TOKEN, { name: 'audit ops', role: 'viewer' })).status,
    ).toBe(409);
    // A refused action leaves no entry: a do-not-call add whose every row is refused.
    const before = (await api(server, 'GET', '/audit?limit=200', ADMIN_TOKEN)).json.entries as unknown[];
    const dnc = await api(server, 'POST', '/dnc', ADMIN_TOKEN, { numbers: ['not a number'] });
    expect(dnc.status).toBe(200);
    const after = (await api(server, 'GET', '/audit?limit=200', ADMIN_TOKEN)).json.entries as Array<
      Record<string, unknown>
    >;
    expect(after.length).toBe(before.length);
    expect(after.find((e) => e.action === 'key.create' && e.target === first.id)).toMatchObject({
      keyId: null,
      keyName: 'admin-token',
      detail: { name: 'Audit Ops', role: 'operator' },
    });
    // An operator's own action carries its key's id and name.
    const missing = await api(server, 'POST', '/calls/CA-not-live/hangup', first.key);
    expect(missing.status).toBe(404);
    const created = await api(server, 'POST', '/campaigns', first.key, { name: 'audited' });
    expect(created.status).toBe(201);
    const latest = (await api(server, 'GET', '/audit?limit=5', ADMIN_TOKEN)).json.entries as Array<
      Record<string, unknown>
    >;
    expect(latest[0]).toMatchObject({ action: 'campaign.create', keyId: first.id, keyName: 'Audit Ops' });
    // Reading a campaign's results is audited too.
    const id = (created.json as { id: string }).id;
    expect(
      (await fetch(`${server.baseUrl}/v1/campaigns/${id}/results.csv`, { headers: bearer(first.key) }))
        .status,
    ).toBe(200);
    const last = (await api(server, 'GET', '/audit?limit=1', ADMIN_TOKEN)).json.entries as Array<
      Record<string, unknown>
    >;
    expect(last[0]).toMatchObject({ action: 'campaign.results', target: id, keyId: first.id });
  });
});

describe('a rotated ADMIN_TOKEN and a replayed voice webhook, across a restart', () => {
  it("refuses the old token's cookie, and answers a replay the same, then refuses it after the restart", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'callbridge-rotation-'));
    try {
      const first = await spawnServer(productionEnv({ DATA_DIR: dataDir }));
      const admin = await signIn(first, ADMIN_TOKEN);
      expect((await fetch(`${first.baseUrl}/v1/keys`, { headers: { cookie: admin.cookie } })).status).toBe(
        200,
      );

      const params = { CallSid: newCallSid(), From: '+15005550006', To: '+15005550001' };
      const answer = await voiceWebhook(first.baseUrl, params, SIGNED);
      expect(answer.status).toBe(200);
      await agent.nextConnection(); // the one agent pre-warmed for it
      const replay = await voiceWebhook(first.baseUrl, params, SIGNED);
      expect(replay.body).toBe(answer.body);
      expect(replay.observer).toBe(answer.observer);

      await first.kill('SIGKILL');
      const rotated = 'admin-token-of-the-security-holes-test-2';
      const port = Number(new URL(first.baseUrl).port);
      const second = await spawnServer(productionEnv({ DATA_DIR: dataDir, ADMIN_TOKEN: rotated }), { port });
      // The cookie made with the old token lists nothing and creates nothing.
      expect((await fetch(`${second.baseUrl}/v1/keys`, { headers: { cookie: admin.cookie } })).status).toBe(
        401,
      );
      const create = await fetch(`${second.baseUrl}/v1/keys`, {
        method: 'POST',
        headers: {
          cookie: admin.cookie,
          'x-callbridge-csrf': admin.csrf,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ name: 'sneaky', role: 'admin' }),
      });
      expect(create.status).toBe(401);
      expect((await api(second, 'GET', '/keys', rotated)).json.keys).toEqual([]);
      // The replay after the restart is refused: no stream URL, observer token or agent.
      const late = await voiceWebhook(second.baseUrl, params, SIGNED);
      expect(late.status).toBe(409);
      expect(late.streamUrl).toBe('');
      expect(late.observer).toBeNull();
      await second.dispose();
      await first.dispose();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
