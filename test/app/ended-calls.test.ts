// What becomes of an ended call's record, in order: its end announced at once, its recording (once
// the store has it whole) announced and joined to the record, the record saved, and only a bridged
// call's record queued for analysis. src/app/ended-calls.ts; the whole path runs in
// test/e2e/call-record.test.ts and test/e2e/analysis.test.ts.
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { endedCallPipeline } from '../../src/app/ended-calls.js';
import type { OutboundStatusReport } from '../../src/call/carrier-port.js';
import { unansweredRecord } from '../../src/outbound/reports.js';
import type { RecordingSummary } from '../../src/recording/recorder.js';
import type { AnalysisSubject } from '../../src/speech/analysis.js';
import type { CallRecord } from '../../src/store/call-record.js';

const NOW = Date.UTC(2026, 0, 5, 10, 0, 0);

const report: OutboundStatusReport = {
  carrier: 'twilio',
  callSid: 'CA-ended',
  from: '+15550100',
  to: '+15550101',
  context: { attemptId: null, campaignId: null, contact: null, profile: 'default', variables: {}, amd: null },
  status: 'busy',
  reason: null,
  durationMs: null,
};

/** A carrier's record of a call never answered, and the same call as if it had been bridged. */
const unanswered = unansweredRecord(report, 'carrier status busy', NOW);
const { carrierStatus: _, ...bridged } = unanswered;

function rig(summary: RecordingSummary | null, save: (record: CallRecord) => Promise<void>) {
  const steps: string[] = [];
  const saved: CallRecord[] = [];
  const analysed: AnalysisSubject[] = [];
  const errors: unknown[] = [];
  const logger = pino({ level: 'error' }, { write: (line: string) => void errors.push(JSON.parse(line)) });
  const pipeline = endedCallPipeline({
    recordings: {
      completeCall: async () => {
        steps.push('recording complete');
        return summary;
      },
    },
    store: {
      saveCallRecord: async (record) => {
        steps.push('saved');
        saved.push(record);
        await save(record);
      },
    },
    analysis: {
      enqueue: async (record) => {
        steps.push('analysis queued');
        analysed.push(record);
      },
    },
    announce: (event) => steps.push(`announced ${event.name}`),
    logger,
    now: () => NOW,
  });
  return { pipeline, steps, saved, analysed, errors };
}

describe('the ended-call pipeline', () => {
  it('announces the end at once, then the recording, then saves the record with it and queues its analysis', async () => {
    const summary: RecordingSummary = { state: 'ready', durationMs: 4_000, bytes: 64_044, pauses: [] };
    const { pipeline, steps, saved, analysed } = rig(summary, async () => {});
    pipeline(bridged);
    expect(steps[0]).toBe('announced calls/call.ended');
    await expect.poll(() => steps).toHaveLength(5);
    expect(steps).toEqual([
      'announced calls/call.ended',
      'recording complete',
      'announced calls/recording.ready',
      'saved',
      'analysis queued',
    ]);
    expect(saved[0]!.recording).toEqual({ state: 'ready', durationMs: 4_000, bytes: 64_044, pauses: [] });
    expect(analysed.map((record) => record.callSid)).toEqual(['CA-ended']);
  });

  it('saves a recording that failed as failed, with nothing announced for it', async () => {
    const summary: RecordingSummary = { state: 'failed', durationMs: 1_000, bytes: 44, pauses: [] };
    const { pipeline, steps, saved } = rig(summary, async () => {});
    pipeline(bridged);
    await expect.poll(() => saved).toHaveLength(1);
    expect(saved[0]!.recording?.state).toBe('failed');
    expect(steps).not.toContain('announced calls/recording.ready');
  });

  it('saves the record of a call never answered but queues no analysis of it', async () => {
    const { pipeline, steps, saved, analysed } = rig(null, async () => {});
    pipeline(unanswered);
    await expect.poll(() => saved).toHaveLength(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(steps).toEqual(['announced calls/call.ended', 'recording complete', 'saved']);
    expect(saved[0]!.recording).toBeUndefined();
    expect(analysed).toEqual([]);
  });

  it('logs a record the store refused, and queues no analysis of it', async () => {
    const { pipeline, analysed, errors } = rig(null, async () => {
      throw new Error('disk full');
    });
    pipeline(bridged);
    await expect.poll(() => errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({
      msg: 'could not save the call record',
      callSid: 'CA-ended',
      err: 'disk full',
    });
    expect(analysed).toEqual([]);
  });
});
