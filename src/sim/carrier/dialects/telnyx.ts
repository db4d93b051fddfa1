// The simulated carrier playing Telnyx (docs/protocols/telnyx.md): it posts `call.initiated` to the
// server's Call Control webhook, signed with Ed25519 when the account's key is in the environment,
// and learns the server's answer the way Telnyx does, from the server's request to Telnyx's API:
// here the simulated carrier API, which records the answer's `stream_url`. It then follows Telnyx's
// webhooks (`call.answered`, the spoken decline's `call.speak.ended`, `call.hangup`) and opens the
// media stream. A call the server placed (section 9) is announced by `call.answered` alone, once the
// callee picked up: the server starts its stream with `streaming_start`, and the call's hang-up is
// the simulated callee's to post, since only it knows the cause.
import { randomBytes, randomUUID } from 'node:crypto';
import { OBSERVER_HEADER } from '../../../call/carrier-port.js';
import type { SimCallRecord } from '../../carrier-api/call-log.js';
import type { SimAnswer, SimCallSpec, SimDialect } from '../dialect.js';
import { checkMediaUrl, describeRefusal } from './http.js';
import { findSimulatedCarrierApi, SIM_CARRIER_API_VARIABLE, waitForSimCall } from './sim-api.js';
import { createTelnyxSimStream, telnyxAnswerFormat } from './telnyx-stream.js';
import {
  describeTelnyxSigning,
  postTelnyxEvent,
  TELNYX_SIM_PRIVATE_KEY_VARIABLE,
  type TelnyxSigning,
  telnyxEvent,
  telnyxSigning,
} from './telnyx-webhooks.js';

const EVENTS_PATH = '/carriers/telnyx/events';

function requestBody(call: SimCallRecord, action: string): Record<string, unknown> {
  const request = [...call.requests].reverse().find((r) => r.action === action);
  const body = request?.body;
  return typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
}

export const telnyxDialect: SimDialect = {
  name: 'telnyx',

  describeSigning: describeTelnyxSigning,

  async announce(call: SimCallSpec): Promise<SimAnswer> {
    try {
      return await announce(call);
    } catch (err) {
      return { kind: 'failed', error: `simulated carrier API: ${(err as Error).message}` };
    }
  },
};

/** What the server asked for once it learnt of the call, with the stream it named, as a SimAnswer. */
function streamAnswer(
  call: SimCallSpec,
  callSid: string,
  record: SimCallRecord,
  observerToken: string | undefined,
  warnings: string[],
  afterHangup?: () => Promise<void>,
): SimAnswer {
  const answer = { ...requestBody(record, 'answer'), ...requestBody(record, 'streaming_start') };
  const clientState = typeof answer.client_state === 'string' ? answer.client_state : null;
  const mediaUrl = checkMediaUrl(record.streamUrl!, 'stream_url');
  if (mediaUrl instanceof Error) return { kind: 'failed', error: mediaUrl.message };
  const format = telnyxAnswerFormat(answer);
  if (format instanceof Error) return { kind: 'failed', error: format.message };
  if (answer.stream_bidirectional_mode !== 'rtp') {
    warnings.push(
      'the answer does not ask for stream_bidirectional_mode "rtp": Telnyx would play nothing back',
    );
  }
  if ((answer.stream_track ?? 'inbound_track') !== 'inbound_track') {
    warnings.push('the answer streams a track other than inbound_track: the agent would hear itself');
  }
  const stream = createTelnyxSimStream({
    url: mediaUrl,
    callSid,
    from: call.from,
    to: call.to,
    format,
    clientState,
    ...(afterHangup ? { afterHangup } : {}),
  });
  return { kind: 'stream', stream, observerToken, warnings };
}

/** The answered outbound call: `call.answered`, then the stream the server starts for it. */
async function announceOutbound(
  call: SimCallSpec,
  outbound: NonNullable<SimCallSpec['outbound']>,
): Promise<SimAnswer> {
  const signing: TelnyxSigning = telnyxSigning(call.env);
  const api = await findSimulatedCarrierApi(call.server, call.env, call.timeoutMs);
  if (api === undefined) return { kind: 'failed', error: 'the server names no simulated carrier API' };
  const callSid = outbound.callSid;
  const payload = {
    call_control_id: callSid,
    call_leg_id: randomUUID(),
    call_session_id: randomUUID(),
    connection_id: outbound.accountSid,
    from: call.from,
    to: call.to,
    direction: 'outgoing',
    state: 'answered',
    client_state: outbound.clientState ?? null,
    start_time: new Date().toISOString(),
  };
  const answered = await postTelnyxEvent(
    outbound.answerUrl,
    telnyxEvent('call.answered', payload),
    signing,
    call.timeoutMs,
    call.signal,
  );
  if (!answered.ok) return { kind: 'failed', error: `call.answered: ${answered.error}` };
  if (answered.status !== 200) {
    return {
      kind: 'failed',
      error: `call.answered refused: ${describeRefusal(answered.status, answered.body)}`,
    };
  }
  const observerToken = answered.headers.get(OBSERVER_HEADER)?.trim() || undefined;
  const record = await waitForSimCall(api, callSid, 'stream', call.timeoutMs, call.signal);
  if (
    record === undefined ||
    (record.streamUrl === undefined && record.state !== 'ended' && record.spoken.length === 0)
  ) {
    return { kind: 'failed', error: `the server started no stream within ${call.timeoutMs} ms` };
  }
  if (record.streamUrl === undefined) {
    // Declined: the message is spoken, then the server hangs up on `call.speak.ended`.
    const say = record.spoken.join(' ') || undefined;
    if (say !== undefined) {
      const played = record.requests.some((r) => r.action === 'playback_start');
      const speak = requestBody(record, played ? 'playback_start' : 'speak');
      await postTelnyxEvent(
        outbound.answerUrl,
        telnyxEvent(played ? 'call.playback.ended' : 'call.speak.ended', {
          ...payload,
          status: 'completed',
          client_state: speak.client_state ?? payload.client_state,
        }),
        signing,
        call.timeoutMs,
        call.signal,
      );
    }
    return { kind: 'declined', reason: 'the server started no media stream', ...(say ? { say } : {}) };
  }
  return streamAnswer(call, callSid, record, observerToken, []);
}

async function announce(call: SimCallSpec): Promise<SimAnswer> {
  if (call.outbound) return announceOutbound(call, call.outbound);
  const signing: TelnyxSigning = telnyxSigning(call.env);
  const api = await findSimulatedCarrierApi(call.server, call.env, call.timeoutMs);
  if (api === undefined) {
    return {
      kind: 'failed',
      error:
        'Telnyx answers calls through its API, and the server names no simulated carrier API ' +
        `(GET / has no simulatedCarrierApi, and ${SIM_CARRIER_API_VARIABLE} is not set)`,
    };
  }
  const callSid = `v3:${randomBytes(24).toString('base64url')}`;
  const payload = {
    call_control_id: callSid,
    call_leg_id: randomUUID(),
    call_session_id: randomUUID(),
    connection_id: 'simulated',
    from: call.from,
    to: call.to,
    direction: 'incoming',
    state: 'parked',
    client_state: null,
    start_time: new Date().toISOString(),
  };
  const url = `${call.server}${EVENTS_PATH}`;
  const post = (eventType: string, extra: Record<string, unknown> = {}) =>
    postTelnyxEvent(
      url,
      telnyxEvent(eventType, { ...payload, ...extra }),
      signing,
      call.timeoutMs,
      call.signal,
    );

  const initiated = await post('call.initiated');
  if (!initiated.ok) return { kind: 'failed', error: `call.initiated: ${initiated.error}` };
  if (initiated.status < 200 || initiated.status > 299) {
    const hint =
      signing.kind === 'no-key'
        ? ` (TELNYX_PUBLIC_KEY is set but ${TELNYX_SIM_PRIVATE_KEY_VARIABLE} is not)`
        : '';
    return {
      kind: 'failed',
      error: `call.initiated refused: ${describeRefusal(initiated.status, initiated.body)}${hint}`,
    };
  }
  const observerToken = initiated.headers.get(OBSERVER_HEADER)?.trim() || undefined;
  const warnings: string[] = [];
  if (initiated.status !== 200)
    warnings.push(`server answered call.initiated ${initiated.status}; Telnyx wants 200`);

  const answered = await waitForSimCall(api, callSid, 'answer', call.timeoutMs, call.signal);
  if (answered === undefined) {
    return {
      kind: 'failed',
      error: `the server did not answer the call through the API within ${call.timeoutMs} ms`,
    };
  }
  if (answered.state === 'ended') return { kind: 'declined', reason: 'the server rejected the call' };
  // The stream fields come with the answer, or with a streaming_start after it.
  const answer = { ...requestBody(answered, 'answer'), ...requestBody(answered, 'streaming_start') };
  const clientState = typeof answer.client_state === 'string' ? answer.client_state : null;
  await post('call.answered', { state: 'answered', client_state: clientState });

  if (answered.streamUrl === undefined) {
    // Answered without a stream: the server declines politely (speaks or plays, then hangs up).
    const spoken = await waitForSimCall(api, callSid, 'speak', call.timeoutMs, call.signal);
    const say = spoken?.spoken.join(' ');
    if (say) {
      const played = spoken!.requests.some((r) => r.action === 'playback_start');
      const speak = requestBody(spoken!, played ? 'playback_start' : 'speak');
      await post(played ? 'call.playback.ended' : 'call.speak.ended', {
        status: 'completed',
        client_state: speak.client_state ?? clientState,
      });
      await waitForSimCall(api, callSid, 'end', call.timeoutMs, call.signal);
    }
    await post('call.hangup', { state: 'hangup', hangup_cause: 'normal_clearing', hangup_source: 'callee' });
    return { kind: 'declined', reason: 'answered without a media stream', say };
  }

  return streamAnswer(call, callSid, answered, observerToken, warnings, async () => {
    await post('call.hangup', {
      state: 'hangup',
      hangup_cause: 'normal_clearing',
      hangup_source: 'caller',
    });
  });
}
