// A carrier's final status reaches the dialer as a report about the call it names: the attempt is
// found by that call id, never by the context alone (docs/security.md; the dialer's side is in
// dialer.test.ts). An unanswered call also gets its record here; an answered one waits for its own.
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { OutboundStatusReport } from '../../src/call/carrier-port.js';
import { OutboundReports } from '../../src/outbound/reports.js';
import type { Dialer } from '../../src/outbound/dialer.js';
import type { CallRecord } from '../../src/store/call-record.js';

/** The dialer as the reports see it, recording what it was told. */
function recordingDialer() {
  const reported: Array<{ attemptId: string; callSid: string; outcome: string }> = [];
  const dialer = {
    async attemptReported(attemptId: string, callSid: string, outcome: string) {
      reported.push({ attemptId, callSid, outcome });
      return 'recorded' as const;
    },
    async attemptFinished() {
      throw new Error('a carrier report must name its call');
    },
    callIdentified: async () => true,
  };
  return { dialer: dialer as unknown as Dialer, reported };
}

const report = (attemptId: string, callSid: string, status: OutboundStatusReport['status']) => ({
  carrier: 'exotel',
  callSid,
  from: '+15550100',
  to: '+15550101',
  context: { attemptId, campaignId: 'cmp_1', contact: 1, profile: 'default', variables: {}, amd: null },
  status,
  reason: null,
  durationMs: null,
});

describe('outbound reports', () => {
  it('hands an unanswered call to the dialer by the call id it names, and saves its record', async () => {
    const { dialer, reported } = recordingDialer();
    const saved: CallRecord[] = [];
    const reports = new OutboundReports({
      dialer: () => dialer,
      saveRecord: (record) => saved.push(record),
      isLive: () => false,
      logger: pino({ level: 'silent' }),
    });
    reports.carrierStatus(report('cmp_1.1.1', 'CA-busy', 'busy'));
    await expect
      .poll(() => reported)
      .toEqual([{ attemptId: 'cmp_1.1.1', callSid: 'CA-busy', outcome: 'busy' }]);
    expect(saved.map((record) => [record.callSid, record.endReason])).toEqual([['CA-busy', 'carrier_busy']]);
  });

  it('gives an answered call the grace for its own record, and reports it only if none is live', async () => {
    const { dialer, reported } = recordingDialer();
    const live = new Set(['CA-live']);
    const reports = new OutboundReports({
      dialer: () => dialer,
      saveRecord: () => {},
      isLive: (callSid) => live.has(callSid),
      logger: pino({ level: 'silent' }),
      graceMs: 10,
    });
    reports.carrierStatus(report('cmp_1.2.1', 'CA-live', 'completed'));
    reports.carrierStatus(report('cmp_1.3.1', 'CA-gone', 'completed'));
    await expect.poll(() => reported.map((r) => r.callSid)).toEqual(['CA-gone']);
    reports.close();
  });

  it('finishes an unanswered call once, though its record comes back as any ended call does', async () => {
    // The app hands every saved record, this one included, back to the reports (the call room's onEnded).
    const { dialer, reported } = recordingDialer();
    const finished: unknown[] = [];
    dialer.attemptFinished = async (attempt) => {
      finished.push(attempt);
      return 'recorded';
    };
    const reports: OutboundReports = new OutboundReports({
      dialer: () => dialer,
      saveRecord: (record) => reports.callRecorded(record),
      isLive: () => false,
      logger: pino({ level: 'silent' }),
    });
    reports.carrierStatus(report('cmp_1.4.1', 'CA-no-answer', 'no_answer'));
    await expect.poll(() => reported.map((r) => r.outcome)).toEqual(['no_answer']);
    await new Promise((resolve) => setImmediate(resolve));
    expect(finished).toEqual([]);
  });
});
