// The one call record tests start from: a finished inbound Twilio call with nothing in it. A test
// names only the fields it is about; the rest are these.
import type { CallRecord } from '../../src/store/call-record.js';

export interface CallRecordFields extends Partial<CallRecord> {
  /** When the call started, in ms since the epoch (default: it ended just now); `endedAt` is `durationMs` later. */
  startedMs?: number;
}

export function callRecordFixture(
  callSid: string,
  { startedMs, ...fields }: CallRecordFields = {},
): CallRecord {
  const durationMs = fields.durationMs ?? 1_000;
  const start = startedMs ?? Date.now() - durationMs;
  return {
    callSid,
    streamSid: `MZ-${callSid}`,
    carrier: 'twilio',
    direction: 'inbound',
    from: '+15550100001',
    to: '+15550100002',
    profile: 'support',
    startedAt: new Date(start).toISOString(),
    endedAt: new Date(start + durationMs).toISOString(),
    durationMs,
    endReason: 'caller_hangup',
    outcome: 'completed',
    bargeIns: 0,
    turns: [],
    functionCalls: [],
    latency: { firstAudioMs: null, agentConnectMs: null, agentReportedMs: [], perceivedMs: [] },
    prewarmed: false,
    ...fields,
  };
}
