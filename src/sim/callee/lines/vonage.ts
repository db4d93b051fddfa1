// The simulated callee's calls as Vonage reports them (docs/protocols/vonage.md section 9):
// JSON events to the event URL (`started`, `ringing`, `answered`, then `completed` or how it failed),
// and, with advanced machine detection, `status: human|machine` and the `sub_state: beep_start` that
// ends a voicemail greeting. Each event is signed with the signature secret when the server has one.
import { randomUUID } from 'node:crypto';
import { signVonageWebhook, vonageDialect } from '../../carrier/dialects/vonage.js';
import type { Callee } from '../plan.js';
import { BEEP_MS } from '../sounds.js';
import { HUMAN_VERDICT_MS, MACHINE_VERDICT_MS } from '../timing.js';
import {
  type CalleeFinal,
  type CalleeLineFactory,
  type CalleeProgress,
  type PlannedVerdict,
  postCallback,
} from '../line.js';

const PROGRESS: Readonly<Record<CalleeProgress, string>> = Object.freeze({
  initiated: 'started',
  ringing: 'ringing',
  'in-progress': 'answered',
});

const FINAL: Readonly<Record<CalleeFinal, string>> = Object.freeze({
  completed: 'completed',
  busy: 'busy',
  'no-answer': 'timeout',
  failed: 'failed',
  canceled: 'cancelled',
});

/** Vonage writes numbers without the `+`. */
const bare = (number: string) => number.replace(/^\+/, '');

export const vonageLine: CalleeLineFactory = ({ call, env, timeoutMs }) => {
  const conversationUuid = `CON-${randomUUID()}`;
  const post = async (url: string | null, fields: Record<string, unknown>) => {
    if (url === null) return;
    const body = JSON.stringify({
      uuid: call.callSid,
      conversation_uuid: conversationUuid,
      direction: 'outbound',
      from: bare(call.from),
      to: bare(call.to),
      timestamp: new Date().toISOString(),
      ...fields,
    });
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    const jwt = await signVonageWebhook(env, body);
    if (jwt !== undefined) headers.authorization = `Bearer ${jwt}`;
    await postCallback(url, headers, body, timeoutMs);
  };

  return {
    dialect: vonageDialect,
    progress: (word) => post(call.statusUrl, { status: PROGRESS[word] }),
    final: (word, durationS) =>
      post(call.statusUrl, {
        status: FINAL[word],
        ...(word === 'completed' ? { duration: String(durationS) } : {}),
      }),
    verdicts(callee: Callee, sounds, scale): PlannedVerdict[] {
      if (call.amdUrl === null) return [];
      const verdict = (word: string, afterMs: number, fields: Record<string, unknown>): PlannedVerdict => ({
        word,
        afterMs,
        post: () => post(call.amdUrl, fields),
      });
      switch (callee.kind) {
        case 'person':
          return [verdict('human', HUMAN_VERDICT_MS * scale, { status: 'human' })];
        case 'voicemail':
          // The greeting plays in real time: neither verdict is sped up.
          return [
            verdict('machine', MACHINE_VERDICT_MS, { status: 'machine' }),
            verdict('beep_start', sounds.beepEndsAtMs - BEEP_MS, {
              status: 'machine',
              sub_state: 'beep_start',
            }),
          ];
        case 'fax':
          return [verdict('machine', MACHINE_VERDICT_MS * scale, { status: 'machine' })];
        default:
          // What Vonage reports when it cannot decide is unverified: the simulation reports nothing.
          return [];
      }
    },
  };
};
