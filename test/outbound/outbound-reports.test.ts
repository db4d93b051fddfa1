// A carrier's report finishes a campaign attempt only as a report about the attempt's own recorded
// call id (docs/security.md): a context presented with an invented call id touches nothing.
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { OutboundStatusReport } from '../../src/call/carrier-port.js';
import { OutboundReports } from '../../src/outbound-reports.js';
import type { Dialer } from '../../src/outbound/dialer.js';

/** The dialer as the reports see it: attempts by recorded call id, as its store keeps them. */
function dialerWith(recorded: Map<string, string | null>) {
  const finished: string[] = [];
  const dialer = {
    async attemptFinished(ref: { attemptId: string } | { callSid: string }) {
      if (!('callSid' in ref)) throw new Error('a carrier report must name its call');
      const attempt = [...recorded].find(([, callSid]) => callSid === ref.callSid)?.[0];
      if (attempt === undefined) return 'not_open' as const;
      recorded.delete(attempt);
      finished.push(attempt);
      return 'recorded' as const;
    },
    async callPlaced(attemptId: string, callSid: string) {
      if (!recorded.has(attemptId)) return false;
      const known = recorded.get(attemptId);
      if (known !== null) return known === callSid;
      recorded.set(attemptId, callSid);
      return true;
    },
    callIdentified: async () => true,
  };
  return { dialer: dialer as unknown as Dialer, finished };
}

const report = (attemptId: string, callSid: string): OutboundStatusReport => ({
  carrier: 'exotel',
  callSid,
  from: '+15550100',
  to: '+15550101',
  context: { attemptId, campaignId: 'cmp_1', contact: 1, profile: 'default', variables: {}, amd: null },
  status: 'busy',
  reason: null,
  durationMs: null,
});

describe('outbound reports', () => {
  it('leaves a ringing attempt untouched by its context replayed with another call id', async () => {
    // Issue 19: a context passed with an invented CallSid marked a real, still ringing attempt completed.
    const recorded = new Map<string, string | null>([['cmp_1.1.1', 'CA-real']]);
    const { dialer, finished } = dialerWith(recorded);
    const saved: string[] = [];
    const reports = new OutboundReports({
      dialer: () => dialer,
      saveRecord: (record) => saved.push(record.callSid),
      isLive: () => false,
      logger: pino({ level: 'silent' }),
    });
    reports.carrierStatus(report('cmp_1.1.1', 'CA-invented'));
    // The real call's own report, after: it finishes the attempt, and it alone did.
    reports.carrierStatus(report('cmp_1.1.1', 'CA-real'));
    await expect.poll(() => finished).toEqual(['cmp_1.1.1']);
    expect(recorded.has('cmp_1.1.1')).toBe(false);
  });

  it('records the call id of an attempt that had none from its report, then finishes it', async () => {
    const recorded = new Map<string, string | null>([['cmp_1.2.1', null]]);
    const { dialer, finished } = dialerWith(recorded);
    const reports = new OutboundReports({
      dialer: () => dialer,
      saveRecord: () => {},
      isLive: () => false,
      logger: pino({ level: 'silent' }),
    });
    reports.carrierStatus(report('cmp_1.2.1', 'CA-first'));
    await expect.poll(() => finished).toEqual(['cmp_1.2.1']);
  });
});
