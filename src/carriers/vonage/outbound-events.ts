// What Vonage's events about an outbound call say, in the common words (docs/protocols/vonage.md
// section 9; docs/protocols/answering-machine-detection.md section 6). Pure: the event route reads
// the JSON, these read the words.
import type { VerdictReport } from '../../call/outbound/amd-gate.js';
import type { OutboundFinalStatus } from '../../call/carrier-port.js';

/** The `status` words that end a call; `started`, `ringing`, `answered` are progress. */
const FINAL_STATUSES: Readonly<Record<string, OutboundFinalStatus>> = Object.freeze({
  completed: 'completed',
  busy: 'busy',
  timeout: 'no_answer',
  unanswered: 'no_answer',
  failed: 'failed',
  rejected: 'failed',
  cancelled: 'canceled',
});

export function vonageFinalStatus(status: string): OutboundFinalStatus | null {
  return Object.hasOwn(FINAL_STATUSES, status) ? FINAL_STATUSES[status]! : null;
}

/**
 * The detection result an event carries, or null for an event that carries none. `sub_state:
 * beep_start` ends the greeting; `beep_timeout` (no beep heard in time; unverified) is read as its
 * end too, since the greeting has had the whole timeout to play.
 */
export function vonageVerdict(status: string, subState: string): VerdictReport | null {
  if (subState === 'beep_start' || subState === 'beep_timeout') {
    return { verdict: 'machine', messageEnded: true, detectionMs: null, raw: subState };
  }
  if (status === 'human') return { verdict: 'human', messageEnded: false, detectionMs: null, raw: 'human' };
  if (status === 'machine') {
    return { verdict: 'machine', messageEnded: false, detectionMs: null, raw: 'machine' };
  }
  return null;
}
