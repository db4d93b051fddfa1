// A live call as operators see it in `GET /v1/calls?live=true`, and the port through which the
// admin API lists and controls live calls, whichever instance carries them (docs/architecture.md
// section 8). One instance answers from its own registry; a fleet sharing Redis answers from its
// live-call directory and relays controls to the call's instance.
import type { LiveCall } from '../../api/calls.js';
import type { CallSession } from '../session/session.js';

/** As the wire contract declares it (src/api/calls.ts). */
export type { LiveCall } from '../../api/calls.js';

export function liveCallOf(session: CallSession, where: { instance: string; region: string }): LiveCall {
  const { info } = session;
  return {
    callSid: info.callSid,
    carrier: info.carrier,
    direction: info.direction,
    from: info.from,
    to: info.to,
    startedAt: session.startedAt.toISOString(),
    campaign: info.campaign ?? null,
    instance: where.instance,
    region: where.region,
  };
}

/** What became of a control sent to a live call. */
export type ControlOutcome =
  | { ok: true; instance: string }
  | { ok: false; reason: 'not_found' | 'refused' | 'unreachable'; message: string };

export interface LiveCalls {
  /** Every live call the deployment can see: this instance's, or the whole fleet's. */
  list(): Promise<LiveCall[]>;
  hangup(callSid: string): Promise<ControlOutcome>;
  transfer(callSid: string, target: string): Promise<ControlOutcome>;
  /**
   * Pauses or resumes the call's recording, or discards it (its recording was deleted while it
   * runs: nothing more is written); refused when the call is not recorded.
   */
  recording(callSid: string, action: RecordingAction): Promise<ControlOutcome>;
}

export type RecordingAction = 'pause' | 'resume' | 'discard';
