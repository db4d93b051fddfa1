// The latency observer on fake timers with a fake call log: the perceived latency dated from the
// end of the caller's speech, the figures taken once, a person's wait only where a person was
// detected, and the agent's own reports with junk ignored.
import type { Histogram } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { realClock } from '../../../src/call/clock.js';
import { LatencyObserver } from '../../../src/call/session/latency.js';
import { createMetrics, type Metrics } from '../../../src/metrics/metrics.js';

let metrics: Metrics;
let log: { perceived: number[]; reported: number[]; firstAudioAt: number | null };
let view: { person: boolean; appliedAt: number | null };

function observer(): LatencyObserver {
  return new LatencyObserver({
    metrics,
    log: {
      firstAudio: () => {
        if (log.firstAudioAt !== null) return null;
        log.firstAudioAt = performance.now();
        return log.firstAudioAt;
      },
      perceived: (ms) => log.perceived.push(ms),
      agentReported: (ms) => log.reported.push(ms),
    },
    clock: realClock,
    carrier: 'twilio',
    answeredAtMs: performance.now(),
    view: {
      personAnswered: () => view.person,
      prewarmed: () => false,
      settingsAppliedAtMs: () => view.appliedAt,
    },
  });
}

async function samples(histogram: Histogram<string>): Promise<number> {
  const { values } = await histogram.get();
  return values.filter((v) => v.metricName?.endsWith('_count')).reduce((n, v) => n + v.value, 0);
}

beforeEach(() => {
  vi.useFakeTimers();
  metrics = createMetrics('test');
  log = { perceived: [], reported: [], firstAudioAt: null };
  view = { person: false, appliedAt: null };
});

afterEach(() => {
  vi.useRealTimers();
});

describe('the latency observer', () => {
  it('measures perceived latency from the dated end of speech to the answer, once per answer', async () => {
    const o = observer();
    const endedAt = performance.now();
    await vi.advanceTimersByTimeAsync(700);
    o.callerSpeechEnded(endedAt);
    await vi.advanceTimersByTimeAsync(300);
    o.audioSent();
    o.audioSent(); // later audio of the same answer
    expect(log.perceived).toEqual([1000]);
    expect(await samples(metrics.perceivedLatency)).toBe(1);
  });

  it("takes the agent's first audio after SettingsApplied once, and the first audio of the call once", async () => {
    const o = observer();
    o.audioSent(); // no agent acknowledged yet: nothing to measure from
    expect(await samples(metrics.agentFirstAudio)).toBe(0);
    view.appliedAt = performance.now();
    await vi.advanceTimersByTimeAsync(250);
    o.audioSent();
    o.audioSent();
    expect(await samples(metrics.agentFirstAudio)).toBe(1);
    expect(await samples(metrics.firstAudio)).toBe(1);
  });

  it("measures a person's wait only once a person was detected", async () => {
    const o = observer();
    o.audioSent();
    expect(await samples(metrics.amdHumanWait)).toBe(0);
    view.person = true;
    o.audioSent();
    o.audioSent();
    expect(await samples(metrics.amdHumanWait)).toBe(1);
  });

  it("keeps the agent's reported latencies, ignoring what is not a finite non-negative number", async () => {
    const o = observer();
    o.agentStarted({
      type: 'AgentStartedSpeaking',
      total_latency: 0.8,
      tts_latency: -1,
      ttt_latency: Number.NaN,
    });
    // From the wire: fields of any type, or none.
    o.agentStarted({ type: 'AgentStartedSpeaking', total_latency: 'soon' } as unknown as Parameters<
      LatencyObserver['agentStarted']
    >[0]);
    expect(log.reported).toEqual([800]);
    expect(await samples(metrics.agentReportedLatency)).toBe(1);
  });
});
