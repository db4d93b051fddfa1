// LatencyReport (docs/protocols/agent.md) into agent_turn_latency_seconds, by kind.
import { describe, expect, it } from 'vitest';
import { observeLatencyReport, readLatencyReport } from '../../src/agent/latency-report.js';
import { createMetrics } from '../../src/metrics/metrics.js';

async function observed(metrics: ReturnType<typeof createMetrics>) {
  const metric = await metrics.agentTurnLatency.get();
  return Object.fromEntries(
    metric.values
      .filter((v) => v.metricName === 'callbridge_agent_turn_latency_seconds_sum')
      .map((v) => [v.labels.kind, v.value]),
  );
}

describe('LatencyReport', () => {
  it('maps each figure to its kind', async () => {
    const metrics = createMetrics('global');
    const report = {
      type: 'LatencyReport',
      stt_latency: 0.12,
      ttt_token_latency: 0.34,
      ttt_text_latency: 0.5,
      tts_latency: 0.2,
      total_latency: 0.86,
    };
    expect(observeLatencyReport(metrics, report)).toEqual([
      { kind: 'stt', seconds: 0.12 },
      { kind: 'thinking', seconds: 0.34 },
      { kind: 'thinking_text', seconds: 0.5 },
      { kind: 'tts', seconds: 0.2 },
      { kind: 'total', seconds: 0.86 },
    ]);
    expect(await observed(metrics)).toEqual({
      stt: 0.12,
      thinking: 0.34,
      thinking_text: 0.5,
      tts: 0.2,
      total: 0.86,
    });
  });

  it('skips missing, negative, non-numeric, infinite and absurd figures without failing', () => {
    expect(
      readLatencyReport({
        type: 'LatencyReport',
        stt_latency: -1,
        ttt_token_latency: '0.3',
        ttt_text_latency: null,
        tts_latency: Number.POSITIVE_INFINITY,
        total_latency: 1e9,
      }),
    ).toEqual([]);
    expect(readLatencyReport({ type: 'LatencyReport', total_latency: 0 })).toEqual([
      { kind: 'total', seconds: 0 },
    ]);
  });
});
