// The simulated callee of a call placed through the simulated Telnyx API (docs/protocols/telnyx.md
// section 9): `call.initiated` (outgoing, which the server must not answer), ringing, then either
// `call.hangup` with the cause Telnyx gives a call that never connected (`user_busy`, `timeout`, a
// failure), or the answer, announced through the Telnyx dialect (`call.answered`, then the stream the
// server starts), with the detection events posted as Telnyx posts them for `greeting_end`, and
// `call.hangup` with `normal_clearing` at the end. Every event carries the call's client state, and
// is signed when the simulation's key is in the server's environment.
import { randomUUID } from 'node:crypto';
import type { SimCallLog } from '../carrier-api/call-log.js';
import type { PlacedSimCall } from '../carrier-api/handler.js';
import { telnyxDialect } from '../carrier/dialects/telnyx.js';
import { postTelnyxEvent, telnyxEvent, telnyxSigning } from '../carrier/dialects/telnyx-webhooks.js';
import { type CallEvent, createEventLog } from '../carrier/events.js';
import type { SimCalleeOptions } from './answer.js';
import type { Callee } from './plan.js';
import { converse, endCall } from './conversation.js';
import { calleeSounds } from './sounds.js';
import {
  BEEP_SETTLE_MS,
  CALLBACK_TIMEOUT_MS,
  FAX_VERDICT_MS,
  HUMAN_VERDICT_MS,
  hungUpWithin,
  UNSURE_VERDICT_MS,
  serverHangup,
} from './timing.js';

/** How long detection listens to a greeting before it calls it a machine. */
const MACHINE_VERDICT_MS = 3_000;

/** The cause of a call that never connected, with the SIP code and the status word the API reports. */
const UNANSWERED: Readonly<Record<string, { cause: string; sip: string; status: string }>> = Object.freeze({
  busy: { cause: 'user_busy', sip: '486', status: 'busy' },
  no_answer: { cause: 'timeout', sip: '480', status: 'no-answer' },
  // Not a cause the protocol notes name: the server reads an unknown cause as a failed call.
  unreachable: { cause: 'not_found', sip: '404', status: 'failed' },
});

type DetectionEvent = 'call.machine.detection.ended' | 'call.machine.greeting.ended';

export async function playTelnyxCallee(
  call: PlacedSimCall,
  callee: Callee,
  calls: SimCallLog,
  opts: SimCalleeOptions,
): Promise<void> {
  const scale = opts.timeScale ?? 1;
  const env = opts.env ?? {};
  const signing = telnyxSigning(env);
  const webhookUrl = call.statusUrl;
  if (webhookUrl === null) return;
  const base = {
    call_control_id: call.callSid,
    call_leg_id: randomUUID(),
    call_session_id: randomUUID(),
    connection_id: call.accountSid,
    from: call.from,
    to: call.to,
    direction: 'outgoing',
    client_state: call.clientState ?? null,
    start_time: new Date().toISOString(),
  };
  // Telnyx does retry a webhook that failed; the simulation does not, as the Twilio callee does not.
  const post = async (eventType: string, extra: Record<string, unknown> = {}) => {
    await postTelnyxEvent(
      webhookUrl,
      telnyxEvent(eventType, { ...base, ...extra }),
      signing,
      CALLBACK_TIMEOUT_MS,
    );
  };
  const hangup = (cause: string, source: string, extra: Record<string, unknown> = {}) =>
    post('call.hangup', {
      state: 'hangup',
      hangup_cause: cause,
      hangup_source: source,
      end_time: new Date().toISOString(),
      ...extra,
    });
  const ended = (
    word: string,
    durationS: number,
    heard: Buffer = Buffer.alloc(0),
    verdict: string | null = null,
  ) => endCall(calls, call, callee, opts, { status: word, durationS, heard, verdict });

  calls.update(call.callSid, (record) => {
    record.status = 'ringing';
  });
  await post('call.initiated', { state: 'bridging' });
  if (await hungUpWithin(calls, call.callSid, callee.ringMs * scale)) {
    ended('canceled', 0);
    await hangup('originator_cancel', 'caller');
    return;
  }
  const unanswered = UNANSWERED[callee.kind];
  if (unanswered !== undefined) {
    ended(unanswered.status, 0);
    await hangup(unanswered.cause, 'callee', { sip_hangup_cause: unanswered.sip });
    return;
  }

  calls.update(call.callSid, (record) => {
    record.state = 'answered';
    record.status = 'in-progress';
  });
  const answeredAt = Date.now();
  const sounds = calleeSounds();
  const serverHungUp = serverHangup(calls, call.callSid);
  const finish = async (heard?: Buffer, verdict?: string | null) => {
    const durationS = Math.max(1, Math.round((Date.now() - answeredAt) / 1000));
    const byServer = serverHungUp.aborted;
    ended('completed', durationS, heard, verdict ?? null);
    await hangup('normal_clearing', byServer ? 'caller' : 'callee');
  };

  const answer = await telnyxDialect.announce({
    server: new URL(webhookUrl).origin,
    from: call.from,
    to: call.to,
    env,
    timeoutMs: CALLBACK_TIMEOUT_MS,
    signal: serverHungUp,
    outbound: {
      answerUrl: webhookUrl,
      callSid: call.callSid,
      accountSid: call.accountSid,
      clientState: call.clientState ?? null,
    },
  });
  if (answer.kind !== 'stream') {
    if (answer.kind === 'failed') opts.onError?.(`answered call ${call.callSid}: ${answer.error}`);
    // A declined call is hung up by the server once its message has been spoken.
    else await hungUpWithin(calls, call.callSid, CALLBACK_TIMEOUT_MS);
    await finish();
    return;
  }

  // Detection listens from the answer; its events come as the callee would give itself away.
  const plans: Record<Callee['kind'], Array<[DetectionEvent, string, number]>> = {
    person: [['call.machine.detection.ended', 'human', HUMAN_VERDICT_MS * scale]],
    silent: [['call.machine.detection.ended', 'not_sure', UNSURE_VERDICT_MS * scale]],
    voicemail: [
      ['call.machine.detection.ended', 'machine', Math.min(MACHINE_VERDICT_MS * scale, sounds.beepEndsAtMs)],
      ['call.machine.greeting.ended', 'beep_detected', sounds.beepEndsAtMs + BEEP_SETTLE_MS],
    ],
    // Telnyx's detection names no fax: a machine whose greeting never ends.
    fax: [['call.machine.detection.ended', 'machine', FAX_VERDICT_MS * scale]],
    busy: [],
    no_answer: [],
    unreachable: [],
  };
  const planned = call.amdUrl === null ? [] : plans[callee.kind];
  let verdict: string | null = null;
  const timers: NodeJS.Timeout[] = [];
  let listening = false;
  // Detection listens from the moment the media flows, as the callee's audio does.
  const onEvent = (event: CallEvent) => {
    if (event.type !== 'stream-started' || listening) return;
    listening = true;
    for (const [eventType, result, atMs] of planned) {
      timers.push(
        setTimeout(() => {
          verdict = result;
          void post(eventType, { result });
        }, atMs),
      );
    }
  };

  const outcome = await converse({
    stream: answer.stream,
    callee,
    sounds,
    scale,
    log: createEventLog(onEvent),
    signal: serverHungUp,
  });
  for (const timer of timers) clearTimeout(timer);
  await finish(outcome.heard, verdict);
}
