// The call records admin API over real HTTP: /v1/calls behind the ADMIN_TOKEN bearer, on the app
// configured like production, with records saved straight into its store.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { CallRecord } from '../../src/store/call-record.js';
import { callRecordFixture } from '../helpers/call-record.js';
import { startServer, type TestServer } from '../helpers/server.js';

const ADMIN_TOKEN = 'admin-token-for-tests-0001';
// No call is placed, so the agent is never dialled.
const ENV = { AGENT_URL: 'ws://127.0.0.1:9', AGENT_API_KEY: 'k', ADMIN_TOKEN };
const HOUR_MS = 60 * 60_000;

const servers: TestServer[] = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function start(env: Record<string, string> = ENV): Promise<TestServer> {
  const server = await startServer(env);
  servers.push(server);
  return server;
}

function callRecord(callSid: string, startedMs: number, extra: Partial<CallRecord> = {}): CallRecord {
  return callRecordFixture(callSid, {
    startedMs,
    durationMs: 30_000,
    turns: [{ role: 'user', content: 'hello', interrupted: false, atMs: 900 }],
    latency: { firstAudioMs: 700, agentConnectMs: 120, agentReportedMs: [400], perceivedMs: [650] },
    ...extra,
  });
}

async function get(server: TestServer, path: string, token: string | null = ADMIN_TOKEN) {
  const res = await fetch(`${server.baseUrl}${path}`, {
    headers: token === null ? {} : { authorization: `Bearer ${token}` },
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
}

interface Page {
  calls: CallRecord[];
  nextCursor: string | null;
}

const sids = (body: Record<string, unknown>) => (body as unknown as Page).calls.map((c) => c.callSid);

/** Five calls a minute apart, the last two failed, CA-3 ended by the agent. */
async function seed(server: TestServer): Promise<{ base: number; records: CallRecord[] }> {
  const base = Date.now() - 2 * HOUR_MS;
  const records = [1, 2, 3, 4, 5].map((n) =>
    callRecord(`CA-${n}`, base + n * 60_000, {
      ...(n >= 4 && { outcome: 'failed' as const, endReason: 'agent_unreachable' }),
      ...(n === 3 && { endReason: 'agent_hangup' }),
    }),
  );
  for (const record of records) await server.store.saveCallRecord(record);
  return { base, records };
}

describe('admin calls API: access', () => {
  it('refuses a request without the bearer, or with a wrong one, with 401', async () => {
    const server = await start();
    await server.store.saveCallRecord(callRecord('CA-secret', Date.now() - HOUR_MS));
    for (const token of [null, 'wrong-token-of-some-length', `${ADMIN_TOKEN}x`]) {
      for (const path of ['/v1/calls', '/v1/calls/CA-secret']) {
        const res = await get(server, path, token);
        expect(res.status).toBe(401);
        expect(res.headers.get('www-authenticate')).toBe('Bearer');
        expect(res.body).toEqual({
          error: { code: 'CALLBRIDGE_UNAUTHORIZED', message: expect.any(String) },
        });
      }
    }
  });

  it('is not mounted when ADMIN_TOKEN is unset', async () => {
    const { ADMIN_TOKEN: _unset, ...env } = ENV;
    const server = await start(env);
    const res = await get(server, '/v1/calls');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: { code: 'CALLBRIDGE_NOT_FOUND', message: expect.any(String) } });
  });
});

describe('admin calls API: reading records', () => {
  it('lists calls newest first and returns one call in full', async () => {
    const server = await start();
    const { records } = await seed(server);
    const list = await get(server, '/v1/calls');
    expect(list.status).toBe(200);
    expect(sids(list.body)).toEqual(['CA-5', 'CA-4', 'CA-3', 'CA-2', 'CA-1']);
    expect(list.body.nextCursor).toBeNull();

    const one = await get(server, '/v1/calls/CA-3');
    expect(one.status).toBe(200);
    expect(one.body).toEqual(records[2]);
  });

  it("shows a call's post-call analysis with its record", async () => {
    const server = await start();
    const analysis: CallRecord['analysis'] = {
      outcome: 'ok',
      attempts: 2,
      summary: 'The caller asked for opening hours.',
      sentiment: 'positive',
      sentimentScore: 0.4,
      topics: ['opening hours and location'],
      intents: ['get help'],
      language: 'en',
      at: new Date().toISOString(),
    };
    const skipped: CallRecord['analysis'] = {
      outcome: 'skipped',
      reason: 'language "es" is not accepted by the text intelligence endpoint (English only)',
      attempts: 0,
      at: new Date().toISOString(),
    };
    await server.store.saveCallRecord(callRecord('CA-analysed', Date.now() - HOUR_MS, { analysis }));
    await server.store.saveCallRecord(callRecord('CA-skipped', Date.now() - HOUR_MS, { analysis: skipped }));
    expect((await get(server, '/v1/calls/CA-analysed')).body.analysis).toEqual(analysis);
    expect((await get(server, '/v1/calls/CA-skipped')).body.analysis).toEqual(skipped);
  });

  it('answers 404 in the error format for an unknown call', async () => {
    const server = await start();
    const res = await get(server, '/v1/calls/CA-nobody');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: { code: 'CALLBRIDGE_NOT_FOUND', message: 'no call "CA-nobody"' } });
  });

  it('pages with limit and cursor, every call exactly once', async () => {
    const server = await start();
    await seed(server);
    const pages: string[][] = [];
    let cursor: string | null = null;
    do {
      const query: string = `/v1/calls?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const res = await get(server, query);
      expect(res.status).toBe(200);
      pages.push(sids(res.body));
      cursor = (res.body as unknown as Page).nextCursor;
    } while (cursor !== null && pages.length < 10);
    expect(pages).toEqual([['CA-5', 'CA-4'], ['CA-3', 'CA-2'], ['CA-1']]);
  });

  it('filters on since, until, outcome and reason', async () => {
    const server = await start();
    const { base } = await seed(server);
    const at = (n: number) => encodeURIComponent(new Date(base + n * 60_000).toISOString());
    const list = async (query: string) => {
      const res = await get(server, `/v1/calls?${query}`);
      expect(res.status).toBe(200);
      return sids(res.body);
    };
    expect(await list(`since=${at(2)}&until=${at(4)}`)).toEqual(['CA-3', 'CA-2']);
    expect(await list('outcome=failed')).toEqual(['CA-5', 'CA-4']);
    expect(await list('outcome=completed&reason=caller_hangup')).toEqual(['CA-2', 'CA-1']);
    expect(await list('reason=agent_hangup')).toEqual(['CA-3']);
    expect(await list(`reason=agent_unreachable&until=${at(5)}`)).toEqual(['CA-4']);

    // The same instant written with an offset, and a bare date (midnight UTC).
    const local = new Date(base + 4 * 60_000 + 2 * HOUR_MS).toISOString().replace('Z', '+02:00');
    expect(await list(`since=${encodeURIComponent(local)}`)).toEqual(['CA-5', 'CA-4']);
    const tomorrow = new Date(Date.now() + 24 * HOUR_MS).toISOString().slice(0, 10);
    expect(await list(`since=${tomorrow}`)).toEqual([]);
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=201', 'limit'],
    ['limit=ten', 'limit'],
    ['limit=1.5', 'limit'],
    ['limit=5&limit=6', 'limit'],
    ['since=yesterday', 'since'],
    ['since=2025-02-30', 'since'],
    ['since=2025-13-01', 'since'],
    ['since=2025-01-01T10:00:00+24:00', 'since'],
    ['until=2025-01-31T09:00:00', 'until'],
    ['until=2025-01-31T24:00:00Z', 'until'],
    ['outcome=busy', 'outcome'],
    ['reason=', 'reason'],
    ['cursor=not-a-cursor', 'cursor'],
    [`cursor=${Buffer.from('{"at":1}').toString('base64url')}`, 'cursor'],
  ])('answers 400 naming the parameter for %s', async (query, name) => {
    const server = await start();
    const res = await get(server, `/v1/calls?${query}`);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: { code: 'CALLBRIDGE_BAD_REQUEST', message: expect.any(String) } });
    expect((res.body.error as { message: string }).message).toContain(name);
  });
});

describe('admin calls API: durability', () => {
  it('keeps records across a restart on the same DATA_DIR', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'callbridge-calls-'));
    dirs.push(dataDir);
    const record = callRecord('CA-durable', Date.now() - HOUR_MS);

    const before = await startServer({ ...ENV, DATA_DIR: dataDir });
    try {
      await before.store.saveCallRecord(record);
    } finally {
      await before.close();
    }

    const after = await start({ ...ENV, DATA_DIR: dataDir });
    expect(await after.store.getCallRecord('CA-durable')).toEqual(record);
    const res = await get(after, '/v1/calls/CA-durable');
    expect(res.status).toBe(200);
    expect(res.body).toEqual(record);
  });
});
