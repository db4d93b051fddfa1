// The simulated callee's calls as Plivo reports them (docs/protocols/plivo.md section 9):
// no progress callbacks (none were asked for), the hang-up URL with the final `CallStatus` and
// `HangupCause`, and the machine-detection URL with `Machine=true|false` only: Plivo reports no
// beep, so a machine's greeting is left to end on its own. Each post is signed with
// X-Plivo-Signature-V3 when the server has an auth token.
import { plivoDialect, plivoForm } from '../../carrier/dialects/plivo.js';
import type { Callee } from '../plan.js';
import { HUMAN_VERDICT_MS, MACHINE_VERDICT_MS } from '../timing.js';
import { type CalleeFinal, type CalleeLineFactory, type PlannedVerdict, postCallback } from '../line.js';

/** Plivo's words for each end: `CallStatus`, `HangupCause`, `HangupCauseName`. */
const ENDS: Readonly<Record<CalleeFinal, [string, string, string]>> = Object.freeze({
  completed: ['completed', 'NORMAL_CLEARING', 'Normal Hangup'],
  busy: ['busy', 'USER_BUSY', 'Busy Line'],
  'no-answer': ['no-answer', 'NO_ANSWER', 'No Answer'],
  failed: ['failed', 'UNALLOCATED_NUMBER', 'Unallocated Number'],
  canceled: ['cancel', 'ORIGINATOR_CANCEL', 'Cancelled'],
});

/** Plivo writes numbers without the `+`. */
const bare = (number: string) => number.replace(/^\+/, '');

export const plivoLine: CalleeLineFactory = ({ call, env, timeoutMs }) => {
  const authToken = env.PLIVO_AUTH_TOKEN || undefined;
  const base = {
    CallUUID: call.callSid,
    // Plivo names the create request on the callbacks of a call placed through its API.
    RequestUUID: call.requestId ?? call.callSid,
    From: bare(call.from),
    To: bare(call.to),
    Direction: 'outbound',
  };
  const post = (url: string | null, params: Record<string, string>) => {
    if (url === null) return Promise.resolve();
    const form = plivoForm(url, params, authToken);
    return postCallback(url, form.headers, form.body, timeoutMs);
  };

  return {
    dialect: plivoDialect,
    progress: () => Promise.resolve(),
    final(word, durationS) {
      const [callStatus, cause, causeName] = ENDS[word];
      return post(call.statusUrl, {
        ...base,
        Event: 'Hangup',
        CallStatus: callStatus,
        HangupCause: cause,
        HangupCauseName: causeName,
        Duration: String(durationS),
        BillDuration: String(durationS),
      });
    },
    verdicts(callee: Callee, _sounds, scale): PlannedVerdict[] {
      if (call.amdUrl === null) return [];
      // Plivo says machine or not: a silent line is not a machine, a fax is one.
      const planned: Partial<Record<Callee['kind'], [boolean, number]>> = {
        person: [false, HUMAN_VERDICT_MS * scale],
        silent: [false, HUMAN_VERDICT_MS * scale],
        voicemail: [true, MACHINE_VERDICT_MS],
        fax: [true, MACHINE_VERDICT_MS * scale],
      };
      const verdict = planned[callee.kind];
      if (verdict === undefined) return [];
      const [machine, afterMs] = verdict;
      return [
        {
          word: machine ? 'machine' : 'human',
          afterMs,
          post: () => post(call.amdUrl, { ...base, Machine: String(machine) }),
        },
      ];
    },
  };
};
