// What Plivo's hang-up and machine-detection webhooks of an outbound call say, in the common words
// (docs/protocols/plivo.md section 9; docs/protocols/answering-machine-detection.md,
// section 5). Pure: the routes read the form, these read the words.
import type { VerdictReport } from '../../call/outbound/amd-gate.js';
import type { OutboundFinalStatus } from '../../call/carrier-port.js';

/** `CallStatus` of the hang-up webhook. */
const CALL_STATUSES: Readonly<Record<string, OutboundFinalStatus>> = Object.freeze({
  completed: 'completed',
  busy: 'busy',
  'no-answer': 'no_answer',
  timeout: 'no_answer',
  failed: 'failed',
  cancel: 'canceled',
  canceled: 'canceled',
  cancelled: 'canceled',
});

/**
 * `HangupCause` when `CallStatus` says nothing we know (unverified which of the two every account
 * sends): the SIP-style cause names.
 */
const HANGUP_CAUSES: Readonly<Record<string, OutboundFinalStatus>> = Object.freeze({
  NORMAL_CLEARING: 'completed',
  USER_BUSY: 'busy',
  NO_ANSWER: 'no_answer',
  NO_USER_RESPONSE: 'no_answer',
  ALLOTTED_TIMEOUT: 'no_answer',
  ORIGINATOR_CANCEL: 'canceled',
});

const CAUSE_WORD = /^[A-Za-z0-9_ -]{1,64}$/;

/** The final status of a hang-up webhook, or null when it names none (and no cause either). */
export function plivoFinalStatus(callStatus: string, hangupCause: string): OutboundFinalStatus | null {
  if (Object.hasOwn(CALL_STATUSES, callStatus)) return CALL_STATUSES[callStatus]!;
  if (Object.hasOwn(HANGUP_CAUSES, hangupCause)) return HANGUP_CAUSES[hangupCause]!;
  // Any other cause the carrier names is a call that could not be completed.
  return CAUSE_WORD.test(hangupCause) ? 'failed' : null;
}

/** Plivo's reason for the record: its cause name, bounded; null when it gives none we can show. */
export function plivoHangupReason(hangupCauseName: string, hangupCause: string): string | null {
  const cause = CAUSE_WORD.test(hangupCauseName) ? hangupCauseName : hangupCause;
  return CAUSE_WORD.test(cause) ? `Plivo ${cause}` : null;
}

/**
 * The machine-detection verdict. Plivo says only machine or not, with no end of greeting: a machine
 * leaves the gate waiting for the greeting to fall silent (src/call/outbound/greeting-end.ts).
 */
export function plivoVerdict(machine: string): VerdictReport | null {
  const word = machine.toLowerCase();
  if (word === 'true') return { verdict: 'machine', messageEnded: false, detectionMs: null, raw: 'machine' };
  if (word === 'false') return { verdict: 'human', messageEnded: false, detectionMs: null, raw: 'human' };
  return null;
}
