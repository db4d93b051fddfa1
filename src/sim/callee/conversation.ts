// What an answered callee does on the media stream, whatever carrier placed the call (plan.ts): a
// person listens to the agent's greeting, speaks, and stays a while; a voicemail plays its greeting
// and beep at once, then records until the server hangs up; a fax whistles; a silent line says
// nothing until it hangs up.
import type { SimCallLog } from '../carrier-api/call-log.js';
import type { PlacedSimCall } from '../carrier-api/handler.js';
import type { SimStream } from '../carrier/dialect.js';
import type { CallEventLog } from '../carrier/events.js';
import { type MediaStreamOutcome, runMediaStream } from '../carrier/media-stream.js';
import type { SimCalleeOptions } from './answer.js';
import type { Callee } from './plan.js';
import type { CalleeSounds } from './sounds.js';
import { CALLBACK_TIMEOUT_MS, PERSON_HOLD_MS, VOICEMAIL_RECORD_MS } from './timing.js';

export interface CalleeConversation {
  stream: SimStream;
  callee: Callee;
  sounds: CalleeSounds;
  /** The plan's time scale (src/sim/callee/answer.ts, `timeScale`). */
  scale: number;
  log: CallEventLog;
  /** Aborted when the server hangs the call up through the carrier's API. */
  signal?: AbortSignal;
  /** How long a voicemail records when nothing hangs it up; default VOICEMAIL_RECORD_MS. */
  voicemailRecordMs?: number;
}

export function converse(c: CalleeConversation): Promise<MediaStreamOutcome> {
  const { callee, sounds, scale } = c;
  const audio =
    callee.kind === 'person'
      ? sounds.person
      : callee.kind === 'voicemail'
        ? sounds.voicemail
        : callee.kind === 'fax'
          ? sounds.fax
          : Buffer.alloc(0);
  return runMediaStream({
    stream: c.stream,
    audio,
    realtime: true,
    waitForGreeting: callee.kind === 'person',
    holdMs:
      callee.kind === 'person'
        ? PERSON_HOLD_MS * scale
        : callee.kind === 'voicemail'
          ? (c.voicemailRecordMs ?? VOICEMAIL_RECORD_MS)
          : callee.answeredMs * scale,
    openTimeoutMs: CALLBACK_TIMEOUT_MS,
    log: c.log,
    ...(c.signal ? { signal: c.signal } : {}),
  });
}

/** The call's end in the carrier's log, and for whoever follows the callee (tests). */
export function endCall(
  calls: SimCallLog,
  call: PlacedSimCall,
  callee: Callee,
  opts: SimCalleeOptions,
  end: { status: string; durationS: number; heard?: Buffer; verdict?: string | null },
): void {
  calls.update(call.callSid, (record) => {
    record.state = 'ended';
    record.status = end.status;
    record.durationS = end.durationS;
  });
  opts.onCallEnded?.({
    callSid: call.callSid,
    to: call.to,
    callee,
    status: end.status,
    heard: end.heard ?? Buffer.alloc(0),
    verdict: end.verdict ?? null,
  });
}
