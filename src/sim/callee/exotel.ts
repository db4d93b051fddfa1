// The simulated callee of an Exotel call placed through the simulated API: the phone rings as the
// number plan says; a call never answered ends busy, unanswered or failed; an answered one runs the
// flow, whose Voicebot applet asks the server's applet URL where to stream (the server is the one the
// status callback names) and plays the callee on that stream. Exotel posts its status callback once,
// when the call is over (docs/protocols/exotel.md section 9). No detection: Exotel has none.
import type { SimCallLog } from '../carrier-api/call-log.js';
import type { PlacedSimCall } from '../carrier-api/handler.js';
import { createEventLog } from '../carrier/events.js';
import { exotelDialect } from '../carrier/dialects/exotel.js';
import type { Callee } from './plan.js';
import { converse, endCall } from './conversation.js';
import { calleeSounds } from './sounds.js';
import type { SimCalleeOptions } from './answer.js';
import { CALLBACK_TIMEOUT_MS, VOICEMAIL_RECORD_MS } from './timing.js';

const FINAL_WORDS: Partial<Record<Callee['kind'], string>> = {
  busy: 'busy',
  no_answer: 'no-answer',
  unreachable: 'failed',
};

async function postStatus(url: string | null, params: Record<string, string>): Promise<void> {
  if (url === null) return;
  try {
    await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(params).toString(),
      signal: AbortSignal.timeout(CALLBACK_TIMEOUT_MS),
    });
  } catch {
    // Exotel does not retry a status callback the server missed; neither does the simulation.
  }
}

export async function playExotelCallee(
  call: PlacedSimCall,
  callee: Callee,
  calls: SimCallLog,
  opts: SimCalleeOptions,
): Promise<void> {
  const scale = opts.timeScale ?? 1;
  const ended = (word: string, durationS: number, heard: Buffer = Buffer.alloc(0)) => {
    endCall(calls, call, callee, opts, { status: word, durationS, heard });
    return postStatus(call.statusUrl, {
      CallSid: call.callSid,
      Status: word,
      ConversationDuration: String(durationS),
      DateUpdated: new Date().toISOString(),
    });
  };

  calls.update(call.callSid, (record) => {
    record.status = 'ringing';
  });
  await new Promise((resolve) => setTimeout(resolve, callee.ringMs * scale));
  const unanswered = FINAL_WORDS[callee.kind];
  if (unanswered !== undefined) {
    await ended(unanswered, 0);
    return;
  }
  calls.update(call.callSid, (record) => {
    record.state = 'answered';
    record.status = 'in-progress';
  });
  const answeredAt = Date.now();
  if (call.statusUrl === null) {
    opts.onError?.(`${call.callSid}: no StatusCallback, so the flow cannot find the server's applet URL`);
    await ended('failed', 0);
    return;
  }
  const server = new URL(call.statusUrl).origin;
  const answer = await exotelDialect.announce({
    server,
    // Exotel's `From` is the number it rang; its `CallTo` the ExoPhone.
    from: call.to,
    to: call.from,
    env: {},
    timeoutMs: CALLBACK_TIMEOUT_MS,
    outbound: {
      answerUrl: `${server}/carriers/exotel/stream`,
      callSid: call.callSid,
      accountSid: call.accountSid,
      customField: call.customField ?? null,
    },
  });
  if (answer.kind !== 'stream') {
    // The applet fails and the flow ends the call: answered, then completed.
    opts.onError?.(
      `applet URL of ${call.callSid}: ${answer.kind === 'failed' ? answer.error : answer.reason}`,
    );
    await ended('completed', 1);
    return;
  }
  const sounds = calleeSounds();
  const outcome = await converse({
    stream: answer.stream,
    callee,
    sounds,
    scale,
    log: createEventLog(() => {}),
    // No detection at Exotel: the agent talks to the machine until it stops recording.
    voicemailRecordMs: VOICEMAIL_RECORD_MS * scale,
  });
  await ended('completed', Math.max(1, Math.round((Date.now() - answeredAt) / 1000)), outcome.heard);
}
