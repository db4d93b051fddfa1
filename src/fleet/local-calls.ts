// Live calls of this instance alone: listed from its registry, controlled directly. This is the
// whole of it without Redis, and the owner's side of every relayed control in a fleet.
import type { ControlOutcome, LiveCall, LiveCalls, RecordingAction } from '../call/watch/live-call.js';
import type { RecordingControlResult } from '../recording/recordings.js';
import { liveCallOf } from '../call/watch/live-call.js';
import type { CallRegistry } from '../call/watch/registry.js';

export interface LocalCallsDeps {
  registry: CallRegistry;
  /** Pauses or resumes the recording of a call carried here (src/recording/recordings.ts). */
  recording?(callSid: string, action: RecordingAction): RecordingControlResult;
  instance: string;
  region: string;
}

export function localLiveCalls(deps: LocalCallsDeps): LiveCalls & { listNow(): LiveCall[] } {
  const where = { instance: deps.instance, region: deps.region };
  const notHere = (callSid: string): ControlOutcome => ({
    ok: false,
    reason: 'not_found',
    message: `no live call ${JSON.stringify(callSid.slice(0, 80))}`,
  });
  const listNow = () =>
    deps.registry
      .all()
      .filter((session) => !session.isEnding)
      .map((session) => liveCallOf(session, where));
  return {
    listNow,
    list: async () => listNow(),
    async hangup(callSid) {
      const session = deps.registry.get(callSid);
      if (!session || session.isEnding) return notHere(callSid);
      session.hangup();
      return { ok: true, instance: deps.instance };
    },
    async transfer(callSid, target) {
      const session = deps.registry.get(callSid);
      if (!session || session.isEnding) return notHere(callSid);
      try {
        await session.transfer(target);
        return { ok: true, instance: deps.instance };
      } catch (err) {
        return { ok: false, reason: 'refused', message: (err as Error).message };
      }
    },
    async recording(callSid, action) {
      const session = deps.registry.get(callSid);
      if (!session || session.isEnding) return notHere(callSid);
      const done = deps.recording?.(callSid, action) ?? 'not_recorded';
      if (done === 'not_recorded') {
        return { ok: false, reason: 'refused', message: 'the call is not being recorded' };
      }
      if (done === 'unchanged') {
        const already =
          action === 'pause' ? 'already paused' : action === 'resume' ? 'not paused' : 'discarded';
        return { ok: false, reason: 'refused', message: `the call's recording is ${already}` };
      }
      return { ok: true, instance: deps.instance };
    },
  };
}
