// What Telnyx's webhooks about a call this server placed mean in the carriers' common words
// (docs/protocols/telnyx.md section 9, docs/protocols/answering-machine-detection.md section 4):
// the `hangup_cause` of `call.hangup` as the call's final status, and the detection events as a
// verdict. Causes Telnyx may add later are tolerated: an unknown one is a failed call, its word kept.
import type { MachineVerdict, VerdictReport } from '../../call/outbound/amd-gate.js';
import type { OutboundFinalStatus } from '../../call/carrier-port.js';

const HANGUP_CAUSES: Readonly<Record<string, OutboundFinalStatus>> = Object.freeze({
  normal_clearing: 'completed',
  user_busy: 'busy',
  // The callee's phone declined the call: the callee's doing, like a busy line (retried as one).
  call_rejected: 'busy',
  timeout: 'no_answer',
  no_answer: 'no_answer',
  // This server hung up (or cancelled) the call before it was answered.
  originator_cancel: 'canceled',
});

const CAUSE = /^[a-z0-9_]{1,64}$/;

/** The final status of an outbound call from its `call.hangup`, and the cause word for the record. */
export function telnyxHangupStatus(cause: unknown): { status: OutboundFinalStatus; reason: string } {
  const word = typeof cause === 'string' && CAUSE.test(cause) ? cause : 'unspecified';
  const status = Object.hasOwn(HANGUP_CAUSES, word) ? HANGUP_CAUSES[word]! : 'failed';
  return { status, reason: `hangup_cause ${word}` };
}

export const MACHINE_DETECTION_ENDED = 'call.machine.detection.ended';
export const MACHINE_GREETING_ENDED = 'call.machine.greeting.ended';

const DETECTION_RESULTS: Readonly<Record<string, MachineVerdict>> = Object.freeze({
  human: 'human',
  machine: 'machine',
  not_sure: 'unknown',
});

const RESULT = /^[a-z0-9_]{1,32}$/;

/**
 * A detection event's `result` as a verdict; null when the field is missing or not a word. A word
 * Telnyx does not document is read as unsure, which the call treats as a person.
 */
export function telnyxVerdict(eventType: string, result: unknown): VerdictReport | null {
  if (typeof result !== 'string' || !RESULT.test(result)) return null;
  if (eventType === MACHINE_GREETING_ENDED) {
    // `beep_detected` and `ended` end the greeting; so does `not_sure`, since waiting on would leave
    // the message to the call's own timeout (unverified which reads better on real greetings).
    return { verdict: 'machine', messageEnded: true, detectionMs: null, raw: result };
  }
  const verdict = Object.hasOwn(DETECTION_RESULTS, result) ? DETECTION_RESULTS[result]! : 'unknown';
  return { verdict, messageEnded: false, detectionMs: null, raw: result };
}
