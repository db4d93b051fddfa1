// Post-call analysis (src/speech/analysis.ts) against a speech service scripted by the test and
// against the local one, over a real SQLite store whose clock the test moves: retries happen when
// their backoff is due, not after a sleep.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CallRecord } from '../../src/store/call-record.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { type LocalAgent, startLocalAgent } from '../../src/sim/agent/server.js';
import { AnalysisService, type AnalysisLimits } from '../../src/speech/analysis.js';
import { openSqliteStore } from '../../src/store/sqlite.js';
import type { Store } from '../../src/store/store.js';
import { callRecordFixture } from '../helpers/call-record.js';
import { type FakeSpeech, startFakeSpeech } from '../helpers/fake-speech.js';

const OK_ANSWER = {
  metadata: { request_id: 'r-1', language: 'en' },
  results: {
    summary: { text: 'The caller asked where order W-1 is; it ships tomorrow.' },
    sentiments: { segments: [], average: { sentiment: 'positive', sentiment_score: 0.6 } },
    topics: { segments: [{ text: 'x', topics: [{ topic: 'order status', confidence_score: 0.9 }] }] },
    intents: {
      segments: [{ text: 'x', intents: [{ intent: 'check order status', confidence_score: 0.8 }] }],
    },
  },
};

const TURNS: CallRecord['turns'] = [
  { role: 'assistant', content: 'Thanks for calling, how can I help?', interrupted: false, atMs: 300 },
  { role: 'user', content: 'Where is my order W-1?', interrupted: false, atMs: 3_000 },
  { role: 'assistant', content: 'It ships tomorrow.', interrupted: false, atMs: 5_000 },
];

function record(callSid: string, extra: Partial<CallRecord> = {}): CallRecord {
  return callRecordFixture(callSid, { profile: 'default', durationMs: 60_000, turns: TURNS, ...extra });
}

let dir: string;
let clockMs: number;
let stores: Store[];
let speech: FakeSpeech | undefined;
let local: LocalAgent | undefined;
let services: AnalysisService[];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'callbridge-analysis-'));
  clockMs = Date.now();
  stores = [];
  services = [];
});

afterEach(async () => {
  for (const service of services) await service.stop();
  for (const store of stores) await store.close();
  await speech?.close();
  speech = undefined;
  await local?.close();
  local = undefined;
  rmSync(dir, { recursive: true, force: true });
});

function openStore(): Store {
  const store = openSqliteStore({ file: join(dir, 'callbridge.db'), now: () => clockMs });
  stores.push(store);
  return store;
}

const LIMITS: Partial<AnalysisLimits> = { baseDelayMs: 1_000, maxDelayMs: 8_000, maxAttempts: 4 };

function service(
  store: Store,
  baseUrl: string,
  opts: { languages?: Record<string, string>; limits?: Partial<AnalysisLimits>; timeoutMs?: number } = {},
) {
  const metrics = createMetrics('global');
  const languages = opts.languages ?? { default: 'en' };
  const analysis = new AnalysisService({
    store,
    api: { baseUrl, authorization: 'Token test-key', timeoutMs: opts.timeoutMs ?? 2_000 },
    profileLanguage: (profile) => languages[profile],
    metrics,
    logger: pino({ level: 'silent' }),
    consumer: 'test-instance',
    limits: { ...LIMITS, ...opts.limits },
    now: () => clockMs,
  });
  services.push(analysis);
  return { analysis, metrics };
}

async function outcomes(metrics: ReturnType<typeof createMetrics>): Promise<Record<string, number>> {
  const metric = await metrics.analyses.get();
  return Object.fromEntries(metric.values.map((v) => [String(v.labels.outcome), v.value]));
}

describe('post-call analysis', () => {
  it('sends the transcript with the spec query and lands summary, sentiment, topics and intents', async () => {
    speech = await startFakeSpeech();
    speech.always('/v1/read', { status: 200, body: OK_ANSWER });
    const store = openStore();
    const { analysis, metrics } = service(store, speech.url, { languages: { default: 'en-US' } });
    const original = record('CA-ok');
    await store.saveCallRecord(original);
    await analysis.enqueue(original);
    expect(await analysis.runOnce()).toBe(true);

    expect(speech.requests).toHaveLength(1);
    const request = speech.requests[0]!;
    expect(request.method).toBe('POST');
    expect(Object.fromEntries(request.query)).toEqual({
      language: 'en-US',
      summarize: 'v2',
      sentiment: 'true',
      topics: 'true',
      intents: 'true',
    });
    expect(request.headers.authorization).toBe('Token test-key');
    expect(JSON.parse(request.body)).toEqual({
      text: 'Agent: Thanks for calling, how can I help?\nCaller: Where is my order W-1?\nAgent: It ships tomorrow.',
    });

    const saved = await store.getCallRecord('CA-ok');
    expect(saved?.analysis).toEqual({
      outcome: 'ok',
      attempts: 1,
      summary: 'The caller asked where order W-1 is; it ships tomorrow.',
      sentiment: 'positive',
      sentimentScore: 0.6,
      topics: ['order status'],
      intents: ['check order status'],
      language: 'en',
      at: new Date(clockMs).toISOString(),
    });
    // The rest of the record is untouched.
    expect({ ...saved, analysis: undefined }).toEqual({ ...original, analysis: undefined });
    expect(await outcomes(metrics)).toEqual({ ok: 1 });
    expect(await store.analysisJobCount()).toBe(0);
  });

  it('retries a transient failure with backoff and lands it', async () => {
    // A service that is briefly down, overloaded (429) or failing (5xx) must not cost the call its
    // analysis: the job waits its backoff and tries again.
    speech = await startFakeSpeech();
    speech.script('/v1/read', { status: 503, body: { err_code: 'SERVICE_UNAVAILABLE' } }, { status: 429 });
    speech.always('/v1/read', { status: 200, body: OK_ANSWER });
    const store = openStore();
    const { analysis, metrics } = service(store, speech.url);
    await store.saveCallRecord(record('CA-retry'));
    await analysis.enqueue(record('CA-retry'));

    expect(await analysis.runOnce()).toBe(true); // 503
    expect(await analysis.runOnce()).toBe(false); // backing off
    clockMs += 999;
    expect(await analysis.runOnce()).toBe(false);
    clockMs += 1;
    expect(await analysis.runOnce()).toBe(true); // 429, now twice as long
    clockMs += 1_999;
    expect(await analysis.runOnce()).toBe(false);
    clockMs += 1;
    expect(await analysis.runOnce()).toBe(true); // lands
    expect(speech.requests).toHaveLength(3);
    expect((await store.getCallRecord('CA-retry'))?.analysis).toMatchObject({ outcome: 'ok', attempts: 3 });
    expect(await outcomes(metrics)).toEqual({ ok: 1 });
    const durations = await metrics.analysisDuration.get();
    const counts = Object.fromEntries(
      durations.values
        .filter((v) => v.metricName?.endsWith('_count'))
        .map((v) => [v.labels.outcome, v.value]),
    );
    expect(counts).toEqual({ retried: 2, ok: 1 });
  });

  it('retries when the service cannot be reached at all, and when it does not answer in time', async () => {
    const store = openStore();
    // A port nothing listens on.
    const unreachable = await startFakeSpeech();
    const closedUrl = unreachable.url;
    await unreachable.close();
    const { analysis } = service(store, closedUrl);
    await store.saveCallRecord(record('CA-down'));
    await analysis.enqueue(record('CA-down'));
    await analysis.runOnce();
    expect(await store.analysisJobCount()).toBe(1);
    expect((await store.getCallRecord('CA-down'))?.analysis).toBeUndefined();

    speech = await startFakeSpeech();
    speech.script('/v1/read', { status: 200, hang: true });
    speech.always('/v1/read', { status: 200, body: OK_ANSWER });
    const second = service(store, speech.url, { timeoutMs: 200 }).analysis;
    clockMs += 1_000;
    await second.runOnce(); // times out
    expect(await store.analysisJobCount()).toBe(1);
    clockMs += 2_000;
    await second.runOnce();
    expect((await store.getCallRecord('CA-down'))?.analysis).toMatchObject({ outcome: 'ok', attempts: 3 });
  });

  for (const [status, body, code] of [
    [
      400,
      { err_code: 'INVALID_QUERY_PARAMETER', err_msg: 'missing field language' },
      'INVALID_QUERY_PARAMETER',
    ],
    [400, { err_code: 'PAYLOAD_ERROR', err_msg: 'exactly one of text or url' }, 'PAYLOAD_ERROR'],
    [400, { err_code: 'REMOTE_CONTENT_ERROR', err_msg: 'url points at audio' }, 'REMOTE_CONTENT_ERROR'],
    [401, { err_code: 'INVALID_AUTH', err_msg: 'bad key' }, 'INVALID_AUTH'],
    [405, { err_code: 'METHOD_NOT_ALLOWED', err_msg: 'POST only' }, 'METHOD_NOT_ALLOWED'],
    [413, 'too large', undefined],
  ] as const) {
    it(`records a refused request (HTTP ${status} ${code ?? ''}) as failed and never retries it`, async () => {
      // A request the service refuses will be refused again: retrying only costs requests.
      speech = await startFakeSpeech();
      speech.always('/v1/read', { status, body });
      const store = openStore();
      const { analysis, metrics } = service(store, speech.url);
      await store.saveCallRecord(record('CA-refused'));
      await analysis.enqueue(record('CA-refused'));
      await analysis.runOnce();
      clockMs += 60 * 60_000;
      expect(await analysis.runOnce()).toBe(false);
      expect(speech.requests).toHaveLength(1);
      const saved = (await store.getCallRecord('CA-refused'))?.analysis;
      expect(saved).toMatchObject({ outcome: 'failed', attempts: 1 });
      expect(saved?.reason).toContain(`HTTP ${status}`);
      if (code) expect(saved?.reason).toContain(code);
      expect(saved?.reason).not.toContain('test-key');
      expect(await outcomes(metrics)).toEqual({ failed: 1 });
      expect(await store.analysisJobCount()).toBe(0);
    });
  }

  it('gives up as failed after the last attempt', async () => {
    speech = await startFakeSpeech();
    speech.always('/v1/read', { status: 502 });
    const store = openStore();
    const { analysis } = service(store, speech.url, { limits: { maxAttempts: 3 } });
    await store.saveCallRecord(record('CA-flaky'));
    await analysis.enqueue(record('CA-flaky'));
    for (let i = 0; i < 6; i++) {
      await analysis.runOnce();
      clockMs += 10_000;
    }
    expect(speech.requests).toHaveLength(3);
    const saved = (await store.getCallRecord('CA-flaky'))?.analysis;
    expect(saved).toMatchObject({ outcome: 'failed', attempts: 3 });
    expect(saved?.reason).toMatch(/^gave up after 3 attempts: POST \/v1\/read answered HTTP 502/);
  });

  it('skips, with the reason and without sending, a language the endpoint does not take', async () => {
    speech = await startFakeSpeech();
    speech.always('/v1/read', { status: 200, body: OK_ANSWER });
    const store = openStore();
    const { analysis, metrics } = service(store, speech.url, {
      languages: { spanish: 'es', multi: 'multi', english: 'en-GB' },
    });
    for (const profile of ['spanish', 'multi', 'english', 'gone']) {
      await store.saveCallRecord(record(`CA-${profile}`, { profile }));
      await analysis.enqueue(record(`CA-${profile}`, { profile }));
    }
    while (await analysis.runOnce()) {
      // Work off whatever was queued.
    }
    expect(speech.requests.map((r) => r.query.get('language'))).toEqual(['en-GB']);
    expect((await store.getCallRecord('CA-spanish'))?.analysis).toMatchObject({
      outcome: 'skipped',
      attempts: 0,
      reason: 'language "es" is not accepted by the text intelligence endpoint (English only)',
    });
    expect((await store.getCallRecord('CA-multi'))?.analysis?.reason).toMatch(/"multi" is not accepted/);
    expect((await store.getCallRecord('CA-gone'))?.analysis?.reason).toBe('profile "gone" is not configured');
    expect((await store.getCallRecord('CA-english'))?.analysis?.outcome).toBe('ok');
    expect(await outcomes(metrics)).toEqual({ skipped: 3, ok: 1 });
  });

  it('skips a call where nothing was said, and a call past the queue bound', async () => {
    speech = await startFakeSpeech();
    const store = openStore();
    const { analysis } = service(store, speech.url, { limits: { maxQueued: 1 } });
    const silent = record('CA-silent', {
      turns: [{ role: 'user', content: '  ', interrupted: false, atMs: 1 }],
    });
    await store.saveCallRecord(silent);
    await analysis.enqueue(silent);
    expect((await store.getCallRecord('CA-silent'))?.analysis).toMatchObject({
      outcome: 'skipped',
      reason: 'nothing was said on the call',
    });
    await store.saveCallRecord(record('CA-first'));
    await analysis.enqueue(record('CA-first'));
    await store.saveCallRecord(record('CA-second'));
    await analysis.enqueue(record('CA-second'));
    expect((await store.getCallRecord('CA-second'))?.analysis).toMatchObject({
      outcome: 'skipped',
      reason: 'the analysis queue is full (1 calls)',
    });
    expect((await store.getCallRecord('CA-first'))?.analysis).toBeUndefined();
    expect(speech.requests).toHaveLength(0);
  });

  it('sends a long transcript cut to the bound, and says so', async () => {
    speech = await startFakeSpeech();
    speech.always('/v1/read', { status: 200, body: OK_ANSWER });
    const store = openStore();
    const { analysis } = service(store, speech.url, { limits: { maxTextChars: 200 } });
    const long = record('CA-long', {
      turns: Array.from({ length: 40 }, (_, i) => ({
        role: i % 2 ? ('assistant' as const) : ('user' as const),
        content: `sentence number ${i}`,
        interrupted: false,
        atMs: i,
      })),
    });
    await store.saveCallRecord(long);
    await analysis.enqueue(long);
    await analysis.runOnce();
    const sent = JSON.parse(speech.requests[0]!.body).text as string;
    expect(sent.length).toBeLessThanOrEqual(200);
    expect(sent.startsWith('Caller: sentence number 0')).toBe(true);
    expect(sent.endsWith('Agent: sentence number 39')).toBe(true);
    expect((await store.getCallRecord('CA-long'))?.analysis).toMatchObject({
      outcome: 'ok',
      truncated: true,
    });
  });

  it('loses no queued analysis across a restart: a second store on the same file lands it', async () => {
    // Calls that ended just before a restart must still be analysed after it.
    speech = await startFakeSpeech();
    speech.script('/v1/read', { status: 503 });
    speech.always('/v1/read', { status: 200, body: OK_ANSWER });
    const before = openStore();
    const first = service(before, speech.url).analysis;
    await before.saveCallRecord(record('CA-waiting'));
    await first.enqueue(record('CA-waiting'));
    await before.saveCallRecord(record('CA-failed-once'));
    await first.enqueue(record('CA-failed-once'));
    await first.runOnce(); // CA-waiting: 503, backing off
    await first.stop();
    await before.close();

    const after = openStore();
    const second = service(after, speech.url).analysis;
    clockMs += 1_000;
    while (await second.runOnce()) {
      // Both jobs are due now.
    }
    expect((await after.getCallRecord('CA-waiting'))?.analysis).toMatchObject({ outcome: 'ok', attempts: 2 });
    expect((await after.getCallRecord('CA-failed-once'))?.analysis).toMatchObject({
      outcome: 'ok',
      attempts: 1,
    });
  });

  it('works the queue on its own once started, and hands an interrupted request back at stop', async () => {
    speech = await startFakeSpeech();
    speech.always('/v1/read', { status: 200, body: OK_ANSWER });
    const store = openStore();
    const { analysis } = service(store, speech.url);
    analysis.start();
    await store.saveCallRecord(record('CA-loop'));
    await analysis.enqueue(record('CA-loop'));
    await expect.poll(async () => (await store.getCallRecord('CA-loop'))?.analysis?.outcome).toBe('ok');

    speech.script('/v1/read', { status: 200, hang: true });
    await store.saveCallRecord(record('CA-stopped'));
    await analysis.enqueue(record('CA-stopped'));
    await expect.poll(() => speech!.requests.length).toBe(2);
    await analysis.stop();
    // Not failed, not lost: due again at once for whoever runs next.
    expect((await store.getCallRecord('CA-stopped'))?.analysis).toBeUndefined();
    const next = service(store, speech.url).analysis;
    expect(await next.runOnce()).toBe(true);
    expect((await store.getCallRecord('CA-stopped'))?.analysis?.outcome).toBe('ok');
  });

  it('lands a deterministic analysis from the local speech service', async () => {
    local = await startLocalAgent({ port: 0 });
    const store = openStore();
    const { analysis } = service(store, local.httpUrl);
    await store.saveCallRecord(record('CA-local'));
    await analysis.enqueue(record('CA-local'));
    await analysis.runOnce();
    expect((await store.getCallRecord('CA-local'))?.analysis).toMatchObject({
      outcome: 'ok',
      language: 'en',
      // The whole call read: the caller's wish, the agent's first and last words; the caller's
      // words alone give the sentiment and intents (the agent's "how can I help" is not the caller's).
      summary:
        'The caller wanted to check order status (order status). The agent spoke twice, opening ' +
        'with "Thanks for calling, how can I help?" and closing with "It ships tomorrow."',
      sentiment: 'neutral',
      topics: ['order status'],
      intents: ['check order status'],
    });
  });
});
