// What a call leaves behind as it ends: its record with the outbound part (the campaign attempt and
// what answered), its metrics, its `end` event and its one log line.
import type { Logger } from 'pino';
import type { Metrics } from '../../metrics/metrics.js';
import type { CallRecord } from '../../store/call-record.js';
import type { AnsweringMachine } from '../outbound/answering-machine.js';
import type { CallLogInfo } from './call-log.js';
import type { EndReason } from './end-reason.js';
import type { CallEventHub } from '../watch/events.js';
import type { OutboundContext } from '../outbound/outbound-context.js';

/** The record of an outbound call, with its attempt and what detection concluded. */
export function withOutbound(
  record: CallRecord,
  outbound: OutboundContext | undefined,
  machine: AnsweringMachine | null,
): CallRecord {
  if (!outbound) return record;
  const verdict = machine?.verdict ?? null;
  const voicemail = machine?.voicemail ?? null;
  return {
    ...record,
    outbound: {
      campaign: outbound.campaignId,
      contact: outbound.contact,
      attempt: outbound.attemptId,
      answeredBy: verdict === null ? null : verdict.verdict === 'fax' ? 'machine' : verdict.verdict,
      amdVerdict: verdict?.raw ?? null,
      ...(voicemail ? { voicemail } : {}),
    },
  };
}

export interface EndedCallReport {
  metrics: Metrics;
  events: CallEventHub;
  logger: Logger;
}

/** Counts the ended call, tells its event feed and logs its summary (no words said: LOG_TRANSCRIPTS). */
export function reportEnded(
  record: CallRecord,
  info: CallLogInfo,
  reason: EndReason,
  { metrics, events, logger }: EndedCallReport,
): void {
  const { carrier, direction } = info;
  metrics.callsActive.dec({ carrier });
  metrics.callsTotal.inc({ carrier, direction, reason });
  metrics.callDuration.observe({ carrier, direction }, record.durationMs / 1000);
  events.publish(info.callSid, { type: 'end', reason });
  logger.info(
    {
      call: {
        profile: info.profileName,
        direction,
        reason,
        outcome: record.outcome,
        durationMs: record.durationMs,
        bargeIns: record.bargeIns,
        turns: record.turns.length,
        functionCalls: record.functionCalls.length,
        latency: record.latency,
        prewarmed: record.prewarmed,
      },
    },
    'call ended',
  );
}
