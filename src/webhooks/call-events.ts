// The events the operator gateway receives about calls, in the envelope of every gateway event
// (notifier.ts signs and posts it), each once per call by its key:
// - `calls/call.analysed` when a call's analysis has an outcome: the call's identity and figures
//   (every record field but the transcript, the function calls and the latency lists, so an
//   outbound call's campaign fields travel with it) and its analysis;
// - `calls/call.ended` for every call, when its record is saved (docs/recordings.md);
// - `calls/recording.ready` when a call's recording is complete in the store.
import type { Logger } from 'pino';
import type { CallRecord } from '../store/call-record.js';
import { retryInBackground } from '../retry.js';
import type { NotificationFunction } from './provider.js';

export const ANALYSIS_EVENT_PROVIDER = 'calls';

/** The gateway envelope, as notifier.ts posts it. */
export interface AnalysisGatewayEvent {
  name: string;
  provider: string;
  event: string;
  idempotencyKey: string;
  receivedAt: string;
  payload: { call: Record<string, unknown>; analysis: NonNullable<CallRecord['analysis']> };
}

/** The event for a record whose analysis has an outcome; null when it has none yet. */
export function analysisEvent(record: CallRecord): AnalysisGatewayEvent | null {
  const { analysis, turns: _turns, functionCalls: _calls, latency: _latency, ...call } = record;
  if (!analysis) return null;
  return {
    name: `${ANALYSIS_EVENT_PROVIDER}/call.analysed`,
    provider: ANALYSIS_EVENT_PROVIDER,
    event: 'call.analysed',
    idempotencyKey: `${ANALYSIS_EVENT_PROVIDER}:${record.callSid}:analysed`,
    receivedAt: analysis.at,
    payload: { call, analysis },
  };
}

/** The envelope of any call event. */
export interface CallGatewayEvent {
  name: string;
  provider: string;
  event: string;
  idempotencyKey: string;
  receivedAt: string;
  payload: Record<string, unknown>;
}

function callEvent(
  event: string,
  callSid: string,
  atMs: number,
  payload: Record<string, unknown>,
): CallGatewayEvent {
  return {
    name: `${ANALYSIS_EVENT_PROVIDER}/${event}`,
    provider: ANALYSIS_EVENT_PROVIDER,
    event,
    idempotencyKey: `${ANALYSIS_EVENT_PROVIDER}:${callSid}:${event}`,
    receivedAt: new Date(atMs).toISOString(),
    payload,
  };
}

/** `calls/call.ended`: who called whom, how it ended, and for how long. */
export function callEndedEvent(record: CallRecord): CallGatewayEvent {
  const campaignId = record.outbound?.campaign ?? null;
  const endedMs = Date.parse(record.endedAt);
  return callEvent('call.ended', record.callSid, Number.isNaN(endedMs) ? Date.now() : endedMs, {
    callSid: record.callSid,
    direction: record.direction,
    carrier: record.carrier,
    from: record.from,
    to: record.to,
    outcome: record.outcome,
    reason: record.endReason,
    durationMs: record.durationMs,
    ...(campaignId !== null ? { campaignId } : {}),
  });
}

/** `calls/recording.ready`: the call's recording is complete in the store. */
export function recordingReadyEvent(
  callSid: string,
  recording: { durationMs: number; bytes: number },
  atMs: number,
): CallGatewayEvent {
  return callEvent('recording.ready', callSid, atMs, {
    callSid,
    durationMs: recording.durationMs,
    bytes: recording.bytes,
  });
}

const DELIVERY_ATTEMPTS = 4;
const FIRST_RETRY_MS = 2_000;

/**
 * Delivers call events to the operator gateway through `deliver` (notifier.ts), in the background:
 * a failed delivery is tried again a few times with a growing pause (retry.ts), unless the gateway
 * refused it for good, then logged. Never throws to the caller.
 */
export function callEventAnnouncer(
  deliver: NotificationFunction,
  logger: Logger,
  retryMs = FIRST_RETRY_MS,
): (event: CallGatewayEvent | AnalysisGatewayEvent) => void {
  return (event) => {
    const callSid =
      (event.payload as { callSid?: unknown; call?: { callSid?: unknown } }).callSid ??
      (event.payload as { call?: { callSid?: unknown } }).call?.callSid;
    const log = logger.child({ event: event.name, callSid });
    retryInBackground(() => deliver(event), {
      attempts: DELIVERY_ATTEMPTS,
      backoff: { firstDelayMs: retryMs, maxDelayMs: 60_000 },
      schedule: (run, delayMs) => setTimeout(run, delayMs).unref(),
      done: (outcome) => {
        if (outcome.ok) log.debug('call event delivered');
        else log.error({ err: (outcome.err as Error).message }, 'call event not delivered');
      },
    });
  };
}

/** Announces each analysed call (ANALYSIS=on) to the operator gateway. */
export function analysisAnnouncer(
  deliver: NotificationFunction,
  logger: Logger,
  retryMs = FIRST_RETRY_MS,
): (record: CallRecord) => void {
  const announce = callEventAnnouncer(deliver, logger, retryMs);
  return (record) => {
    const event = analysisEvent(record);
    if (event) announce(event);
  };
}
