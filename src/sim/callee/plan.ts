// The simulated callee's number plan: who answers an outbound call to a number, decided by its last
// two digits (and, for one range, by the attempt), so a campaign against the simulated carrier
// meets every outcome without an account. Pure: the simulated carrier plays what this says, and
// tests predict outcomes from it.
//
//   last two digits  who answers                                       outcome (amd voicemail | hangup | off)
//   00-39            a person who speaks                               completed
//   40-49            a person who stays silent (detection: unknown)    completed (unsure means human)
//   50-59            a voicemail greeting, then a beep                 voicemail_left | machine | completed
//   60-64            a fax tone (a machine that takes no message)      machine | machine | completed
//   65-69            busy on the first attempt, then a person          busy, then completed on a retry
//   70-79            busy                                              busy
//   80-89            rings out, nobody answers                         no_answer
//   90-99            the call cannot be completed                      failed
import type { AnsweredBy, AttemptOutcome } from '../../store/campaign-records.js';

export type CalleeKind = 'person' | 'silent' | 'voicemail' | 'fax' | 'busy' | 'no_answer' | 'unreachable';

/** Answering-machine verdicts as the carrier reports them (docs/protocols/answering-machine-detection.md). */
export type AmdVerdict = 'human' | 'unknown' | 'machine_end_beep' | 'fax';

export interface Callee {
  kind: CalleeKind;
  /** From the dial to the answer, or to the busy tone, the ring-out or the failure. */
  ringMs: number;
  /** How long the callee stays on the line once answered (a voicemail: its greeting, up to the beep). */
  answeredMs: number;
  /** What detection concludes, for calls that are answered. */
  verdict: AmdVerdict | null;
}

const CALLEES: Record<CalleeKind, Callee> = {
  person: { kind: 'person', ringMs: 3_000, answeredMs: 20_000, verdict: 'human' },
  silent: { kind: 'silent', ringMs: 3_000, answeredMs: 45_000, verdict: 'unknown' },
  voicemail: { kind: 'voicemail', ringMs: 12_000, answeredMs: 8_000, verdict: 'machine_end_beep' },
  fax: { kind: 'fax', ringMs: 4_000, answeredMs: 3_000, verdict: 'fax' },
  busy: { kind: 'busy', ringMs: 1_000, answeredMs: 0, verdict: null },
  no_answer: { kind: 'no_answer', ringMs: 30_000, answeredMs: 0, verdict: null },
  unreachable: { kind: 'unreachable', ringMs: 500, answeredMs: 0, verdict: null },
};

/** Who answers a call to `number` (E.164) on its `attempt`-th try (1 for the first). */
export function calleeFor(number: string, attempt = 1): Callee {
  const tail = Number(number.slice(-2));
  if (!/^\d\d$/.test(number.slice(-2))) return CALLEES.unreachable;
  if (tail < 40) return CALLEES.person;
  if (tail < 50) return CALLEES.silent;
  if (tail < 60) return CALLEES.voicemail;
  if (tail < 65) return CALLEES.fax;
  if (tail < 70) return attempt === 1 ? CALLEES.busy : CALLEES.person;
  if (tail < 80) return CALLEES.busy;
  if (tail < 90) return CALLEES.no_answer;
  return CALLEES.unreachable;
}

/** How the call's answerer is recorded. */
export function answeredBy(callee: Callee): AnsweredBy | null {
  switch (callee.verdict) {
    case 'human':
      return 'human';
    case 'unknown':
      return 'unknown';
    case 'machine_end_beep':
    case 'fax':
      return 'machine';
    case null:
      return null;
  }
}

/**
 * The attempt's outcome under a campaign's detection mode. A human, or a verdict that is unsure, is
 * a conversation; a machine gets the voicemail after its beep, or a hang-up; a fax takes no message.
 */
export function expectedOutcome(callee: Callee, amdMode: 'off' | 'voicemail' | 'hangup'): AttemptOutcome {
  switch (callee.kind) {
    case 'person':
    case 'silent':
      return 'completed';
    case 'voicemail':
      return amdMode === 'voicemail' ? 'voicemail_left' : amdMode === 'hangup' ? 'machine' : 'completed';
    case 'fax':
      return amdMode === 'off' ? 'completed' : 'machine';
    case 'busy':
      return 'busy';
    case 'no_answer':
      return 'no_answer';
    case 'unreachable':
      return 'failed';
  }
}
