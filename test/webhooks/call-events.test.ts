// An analysed call is announced to the operator gateway (`calls/call.analysed`), signed like every
// gateway event, carrying the call's identity and its analysis but never its transcript; a failed
// delivery is tried again. The real analysis worker, the real store and a scripted speech service.
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { CallRecord } from '../../src/store/call-record.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { AnalysisService } from '../../src/speech/analysis.js';
import { callRecordFixture } from '../helpers/call-record.js';
import { type FakeSpeech, startFakeSpeech } from '../helpers/fake-speech.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { type FakeOperatorGateway, hmacOf, startFakeOperatorGateway, waitUntil } from './helpers.js';

const SECRET = 'operator-secret-for-call-events';

let server: TestServer | undefined;
let operator: FakeOperatorGateway | undefined;
let speech: FakeSpeech | undefined;
let analysis: AnalysisService | undefined;

afterEach(async () => {
  await analysis?.stop();
  await server?.close();
  await operator?.close();
  await speech?.close();
  server = operator = speech = analysis = undefined;
});

const RECORD: CallRecord = callRecordFixture('CA0000000000000000000000000000aa01', {
  streamSid: 'MZ1',
  direction: 'outbound',
  profile: 'default',
  durationMs: 30_000,
  endReason: 'end_call',
  turns: [
    { role: 'assistant', content: 'Hello, this is Example Dental.', interrupted: false, atMs: 100 },
    { role: 'user', content: 'I want to renew my plan.', interrupted: false, atMs: 2_000 },
  ],
  latency: { firstAudioMs: 400, agentConnectMs: 300, agentReportedMs: [], perceivedMs: [] },
  prewarmed: true,
});

async function start() {
  operator = await startFakeOperatorGateway();
  speech = await startFakeSpeech();
  speech.always('/v1/read', {
    status: 200,
    body: {
      metadata: { language: 'en' },
      results: {
        summary: { text: 'The caller renewed their plan.' },
        sentiments: { average: { sentiment: 'positive', sentiment_score: 0.5 } },
        topics: { segments: [{ topics: [{ topic: 'renewal', confidence_score: 0.9 }] }] },
        intents: { segments: [{ intents: [{ intent: 'renew plan', confidence_score: 0.9 }] }] },
      },
    },
  });
  server = await startServer(
    {
      AGENT_URL: 'ws://127.0.0.1:9',
      AGENT_API_KEY: 'key',
      OPERATOR_GATEWAY_URL: operator.url,
      OPERATOR_GATEWAY_SECRET: SECRET,
    },
    {
      analysis: (store) => {
        analysis = new AnalysisService({
          store,
          api: { baseUrl: speech!.url, authorization: 'Token key', timeoutMs: 2_000 },
          profileLanguage: () => 'en',
          metrics: createMetrics('global'),
          logger: pino({ level: 'silent' }),
          consumer: 'test',
        });
        return analysis;
      },
    },
  );
  await server.store.saveCallRecord(RECORD);
  await analysis!.enqueue(RECORD);
  return { operator, analysis: analysis! };
}

describe('call.analysed', () => {
  it('posts the call and its analysis, signed, without the transcript', async () => {
    const { operator, analysis } = await start();
    expect(await analysis.runOnce()).toBe(true);
    await waitUntil(() => operator.requests.length === 1, 5_000, 'the call event');
    const [request] = operator.requests;
    expect(request!.headers['x-callbridge-event']).toBe('calls/call.analysed');
    expect(request!.headers['idempotency-key']).toBe(`calls:${RECORD.callSid}:analysed`);
    const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(request!.headers['x-callbridge-signature']))!;
    expect(v1).toBe(hmacOf('sha256', SECRET, `${t}.${request!.body}`).toString('hex'));
    const payload = request!.json.payload as {
      call: Record<string, unknown>;
      analysis: Record<string, unknown>;
    };
    expect(payload.call).toMatchObject({
      callSid: RECORD.callSid,
      direction: 'outbound',
      endReason: 'end_call',
    });
    expect(payload.call).not.toHaveProperty('turns');
    expect(request!.body).not.toContain('renew my plan');
    expect(payload.analysis).toMatchObject({
      outcome: 'ok',
      summary: 'The caller renewed their plan.',
      sentiment: 'positive',
      topics: ['renewal'],
      intents: ['renew plan'],
    });
  });

  it('tries a failed delivery again', async () => {
    const { operator, analysis } = await start();
    operator.respondWith((n) => (n === 1 ? 503 : 200));
    await analysis.runOnce();
    await waitUntil(() => operator.requests.length === 2, 10_000, 'the second delivery');
    expect(operator.requests[1]!.headers['idempotency-key']).toBe(`calls:${RECORD.callSid}:analysed`);
  });
});
