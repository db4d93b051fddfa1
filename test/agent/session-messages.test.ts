// The agent socket's message handling for the further protocol messages (docs/protocols/agent.md):
// acknowledgements and LatencyReport are known types, a LatencyReport feeds the turn latency
// histogram, and a type nobody knows is still tolerated and counted.
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createAgentDialer } from '../../src/agent/dialer.js';
import type { AgentServerMessage } from '../../src/agent/protocol.js';
import type { AgentSession } from '../../src/agent/session.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { type FakeAgent, startFakeAgent } from '../helpers/fake-agent.js';

let agent: FakeAgent | undefined;
let session: AgentSession | undefined;

afterEach(async () => {
  session?.close();
  session = undefined;
  await agent?.close();
  agent = undefined;
});

async function counts(metrics: ReturnType<typeof createMetrics>): Promise<Record<string, number>> {
  const metric = await metrics.agentMessages.get();
  return Object.fromEntries(metric.values.map((v) => [String(v.labels.type), v.value]));
}

describe('agent session: further server messages', () => {
  it('counts acknowledgements and LatencyReport as known, observes the report, tolerates the unknown', async () => {
    agent = await startFakeAgent({ autoApply: true });
    const metrics = createMetrics('global');
    const dial = createAgentDialer(
      {
        url: agent.url,
        apiKey: 'k',
        auth: 'key',
        speechApiUrl: 'http://127.0.0.1:1',
        connectTimeoutMs: 2000,
      },
      metrics,
    );
    session = await dial(
      {
        type: 'Settings',
        audio: {
          input: { encoding: 'mulaw', sample_rate: 8000 },
          output: { encoding: 'mulaw', sample_rate: 8000, container: 'none' },
        },
        agent: {},
      },
      pino({ level: 'silent' }),
    );
    const received: AgentServerMessage[] = [];
    let closed = false;
    session.attach({
      onReady: () => {},
      onAudio: () => {},
      onMessage: (m) => received.push(m),
      onClose: () => {
        closed = true;
      },
    });
    const conn = await agent.nextConnection();
    for (const message of [
      { type: 'ThinkUpdated' },
      { type: 'ListenUpdated' },
      { type: 'SpeakUpdated' },
      {
        type: 'LatencyReport',
        stt_latency: 0.1,
        ttt_token_latency: 0.3,
        tts_latency: 0.2,
        total_latency: 0.7,
      },
      { type: 'FunctionCallResponse', id: 'fc_9', name: 'server_fn', content: '{}' },
      { type: 'SomethingNew', detail: 1 },
      { type: 'History', function_calls: [] },
    ]) {
      conn.send(message);
    }
    await expect.poll(() => received.length).toBe(7);
    expect(received.map((m) => m.type)).toEqual([
      'Welcome',
      'ThinkUpdated',
      'ListenUpdated',
      'SpeakUpdated',
      'LatencyReport',
      'FunctionCallResponse',
      'History',
    ]);
    expect(await counts(metrics)).toMatchObject({
      ThinkUpdated: 1,
      ListenUpdated: 1,
      SpeakUpdated: 1,
      LatencyReport: 1,
      FunctionCallResponse: 1,
      History: 1,
      unknown: 1,
    });
    const latency = await metrics.agentTurnLatency.get();
    const counted = latency.values.filter((v) => v.metricName?.endsWith('_count')).map((v) => v.labels.kind);
    expect(counted.sort()).toEqual(['stt', 'thinking', 'total', 'tts']);
    expect(closed).toBe(false);
  });
});
