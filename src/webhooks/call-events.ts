// The event the operator gateway receives when a call's analysis has an outcome: the call's
// identity and figures (every record field but the transcript, the function calls and the latency
// lists, so an outbound call's campaign fields travel with it) and its analysis. Same envelope as
// every gateway event (notifier.ts signs and posts it); one per call, by its key.
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

const DELIVERY_ATTEMPTS = 4;
const FIRST_RETRY_MS = 2_000;

/**
 * Announces each analysed call to the operator gateway through `deliver` (notifier.ts), in the
 * background: a failed delivery is tried again a few times with a growing pause (retry.ts), unless
 * the gateway refused it for good, then logged.
 * Never throws to the analysis worker.
 */
export function analysisAnnouncer(
  deliver: NotificationFunction,
  logger: Logger,
  retryMs = FIRST_RETRY_MS,
): (record: CallRecord) => void {
  return (record) => {
    const event = analysisEvent(record);
    if (!event) return;
    const log = logger.child({ event: event.name, callSid: record.callSid });
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
