// What becomes of a call once it has ended, fed by the call room's `onEnded`: its end is announced
// to the operator gateway at once; its recording, once the store has it whole, is announced and
// joined to the record; the record is saved; and a bridged call's record is queued for post-call
// analysis (never awaited by the call: analysis never delays a call's end).
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Logger } from 'pino';
import type { Recordings } from '../recording/recordings.js';
import type { AnalysisSubject } from '../speech/analysis.js';
import type { CallRecord } from '../store/call-record.js';
import type { Store } from '../store/store.js';
import {
  ANALYSIS_EVENT_PROVIDER,
  analysisAnnouncer,
  type CallGatewayEvent,
  callEndedEvent,
  callEventAnnouncer,
  recordingReadyEvent,
} from '../webhooks/call-events.js';

/** Post-call analysis (ANALYSIS=on): each saved record is handed to it; each outcome is announced. */
export interface Analysis {
  enqueue(record: AnalysisSubject): Promise<void>;
  onAnalysed?(listener: (record: CallRecord) => void): void;
}

export interface EndedCallDeps {
  recordings: Pick<Recordings, 'completeCall'>;
  store: Pick<Store, 'saveCallRecord'>;
  analysis?: Pick<Analysis, 'enqueue'>;
  announce(event: CallGatewayEvent): void;
  logger: Logger;
  now?: () => number;
}

/** Takes each ended call's record through the steps above; returns at once. */
export function endedCallPipeline(deps: EndedCallDeps): (record: CallRecord) => void {
  const now = deps.now ?? Date.now;
  /** The record with its recording, once the store has it whole (recorded calls only). */
  const withRecording = async (record: CallRecord): Promise<CallRecord> => {
    const summary = await deps.recordings.completeCall(record.callSid);
    if (summary === null) return record;
    // A recording deleted during its call stays deleted: no `recording.ready` for it.
    const state = summary.state === 'ready' || summary.state === 'deleted' ? summary.state : 'failed';
    if (state === 'ready') deps.announce(recordingReadyEvent(record.callSid, summary, now()));
    const { durationMs, bytes, pauses } = summary;
    return { ...record, recording: { state, durationMs, bytes, pauses } };
  };
  return (record) => {
    deps.announce(callEndedEvent(record));
    void withRecording(record).then((complete) =>
      deps.store.saveCallRecord(complete).then(
        // A record the carrier's status made (a call never answered) has no conversation to analyse.
        () => (complete.carrierStatus === undefined ? deps.analysis?.enqueue(complete) : undefined),
        (err: Error) => {
          deps.logger.error({ err: err.message, callSid: record.callSid }, 'could not save the call record');
        },
      ),
    );
  };
}

export interface EndedCallsOptions {
  logger: Logger;
  analysis?: Analysis;
}

async function endedCalls(app: FastifyInstance, opts: EndedCallsOptions): Promise<void> {
  // Call events (analysed, ended, recording ready) reach the operator gateway like campaign events:
  // same body and signature.
  const gateway = app.operatorGateway(ANALYSIS_EVENT_PROVIDER);
  opts.analysis?.onAnalysed?.(analysisAnnouncer(gateway, opts.logger));
  app.calls.onEnded(
    endedCallPipeline({
      recordings: app.recordings,
      store: app.store,
      ...(opts.analysis ? { analysis: opts.analysis } : {}),
      announce: callEventAnnouncer(gateway, opts.logger),
      logger: opts.logger,
    }),
  );
}

export default fp(endedCalls, {
  name: 'callbridge-ended-calls',
  decorators: { fastify: ['store', 'operatorGateway'] },
  dependencies: ['callbridge-calls', 'callbridge-recordings', 'callbridge-webhooks'],
});
