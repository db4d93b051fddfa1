// How Telnyx calls are answered (docs/protocols/telnyx.md sections 2 and 9): an inbound call with a
// media stream, or declined politely; an outbound call this server placed, once answered, prepared
// like an inbound call and its stream started. Every request to Telnyx runs after the webhook's 200.
import type { Logger } from 'pino';
import type { MediaFormat } from '../../audio/format.js';
import type { CallIntake, PreparedCall, ResolvedContext } from '../../call/carrier-port.js';
import type { TelnyxStreamCodec } from './config.js';
import { BadRequestError } from '../../errors.js';
import type { RecentIds } from '../recent-ids.js';
import { decodeClientState, encodeClientState } from './client-state.js';
import type { DeferredApi } from './deferred-api.js';
import { telnyxStreamRate } from './rest.js';
import { readCallFields, type TelnyxCallFields, type TelnyxWebhook } from './webhook.js';

/** What the event handlers share for the routes' lifetime. */
export interface TelnyxCalls {
  intake: CallIntake;
  codec: TelnyxStreamCodec;
  /** False without an API key: calls cannot be answered, and are logged as such. */
  hasApi: boolean;
  api: DeferredApi;
  log: Logger;
  /** `call.initiated` already answered (a retry, or a replay inside the signature's 300 s). */
  initiated: RecentIds;
  /** `call.answered` of outbound calls whose stream was already started. */
  answered: RecentIds;
}

/** A bad request counted under its own refusal reason rather than `malformed`. */
export function refusal(message: string, reason: string): Error {
  return Object.assign(new BadRequestError(message), { refusal: reason });
}

/** The format the stream will bring for the codec asked for in the answer. */
export function telnyxMediaFormat(codec: TelnyxStreamCodec): MediaFormat {
  const encoding = codec === 'PCMU' ? 'mulaw' : codec === 'PCMA' ? 'alaw' : 'linear16';
  return { encoding, sampleRate: telnyxStreamRate(codec), channels: 1 };
}

/**
 * The call prepared in the core for its stream: inbound, or outbound with its context.
 * Telnyx retries a webhook that failed, so a failure forgets it: the retry must be answered, not
 * taken for a repeat.
 */
async function prepareCall(
  calls: TelnyxCalls,
  call: TelnyxCallFields,
  seen: RecentIds,
  context?: ResolvedContext,
): Promise<PreparedCall> {
  try {
    // Once per call across the fleet and restarts (a replay within the signature's tolerance
    // gains nothing); `seen` spares this instance the store for the repeats it has seen.
    return await calls.intake.prepareOnce({
      carrier: 'telnyx',
      callSid: call.callSid,
      from: call.from,
      to: call.to,
      direction: context === undefined ? 'inbound' : 'outbound',
      mediaFormat: telnyxMediaFormat(calls.codec),
      ...(context === undefined ? {} : { context }),
      // Only verified webhooks get here: every Telnyx answer is a call on its API.
      verified: true,
    });
  } catch (err) {
    seen.forget(call.callSid);
    throw err;
  }
}

/** Returns the call prepared for an inbound call's stream, if one was. */
export async function onInitiated(
  calls: TelnyxCalls,
  webhook: TelnyxWebhook,
): Promise<PreparedCall | undefined> {
  const { intake, log, codec } = calls;
  const call = readCallFields(webhook);
  const { callSid } = call;
  if (call.direction !== 'incoming') {
    // Our own outbound call: its stream was asked for when it was placed.
    log.info({ callSid, direction: call.direction }, 'telnyx call initiated');
    return;
  }
  if (calls.initiated.seen(callSid)) {
    log.warn({ callSid }, 'repeated call.initiated ignored');
    return;
  }
  const admission = intake.admit('telnyx');
  if (admission !== 'admitted') {
    // Declined before any agent is dialed: answered without a stream, the caller hears why
    // (call.answered → speak), then the call is hung up (call.speak.ended → hangup).
    log.warn({ callSid, reason: admission }, 'call declined');
    calls.api.after('answer call', callSid, (api) =>
      api.answer(callSid, { codec, clientState: encodeClientState({ decline: true }) }),
    );
    return;
  }
  if (!calls.hasApi) {
    log.error({ callSid }, 'TELNYX_API_KEY is not set: the call cannot be answered');
    return;
  }
  const prepared = await prepareCall(calls, call, calls.initiated);
  log.info({ callSid, profile: prepared.profile }, 'telnyx call initiated: answering with a media stream');
  calls.api.after('answer call', callSid, (api) =>
    api.answer(callSid, {
      mediaUrl: prepared.mediaUrl,
      codec,
      clientState: encodeClientState({ token: prepared.token }),
    }),
  );
  return prepared;
}

/** Speaks (or plays) the decline; the call is hung up on `call.speak.ended` / `call.playback.ended`. */
export function declineAnswered(calls: TelnyxCalls, callSid: string, ctx?: string): void {
  // If the message cannot be played or spoken, the caller is not left on a silent line.
  const { message, audioUrl } = calls.intake.decline;
  const state = encodeClientState({ decline: true, ...(ctx === undefined ? {} : { ctx }) });
  calls.api.after(audioUrl ? 'play audio' : 'speak', callSid, (api) =>
    (audioUrl ? api.playback(callSid, audioUrl, state) : api.speak(callSid, message, state)).catch(
      async (err: unknown) => {
        await api.hangup(callSid).catch(() => undefined);
        throw err;
      },
    ),
  );
}

/** The outbound context a call's client state carries; undefined for a call this server did not place. */
export async function outboundOf(
  calls: TelnyxCalls,
  webhook: TelnyxWebhook,
  call: TelnyxCallFields,
): Promise<ResolvedContext | undefined> {
  const ref = decodeClientState(call.clientState)?.ctx;
  if (ref === undefined) return undefined;
  const resolved = await calls.intake.outboundContext('telnyx', ref, true);
  if (resolved === null) {
    throw refusal(
      `telnyx ${webhook.eventType}: the call context in client_state is not valid`,
      'bad_context',
    );
  }
  return resolved;
}

/** Our outbound call was answered: prepared as an inbound call is, then its stream started. */
export async function onOutboundAnswered(
  calls: TelnyxCalls,
  call: TelnyxCallFields,
  outbound: ResolvedContext,
): Promise<PreparedCall | undefined> {
  const { callSid } = call;
  const { log, codec } = calls;
  if (calls.answered.seen(callSid)) {
    log.warn({ callSid }, 'repeated call.answered ignored');
    return;
  }
  if (calls.intake.admit('telnyx') !== 'admitted') {
    declineAnswered(calls, callSid, outbound.ref);
    return;
  }
  if (!calls.hasApi) {
    log.error({ callSid }, 'TELNYX_API_KEY is not set: the call cannot be bridged');
    return;
  }
  const prepared = await prepareCall(calls, call, calls.answered, outbound);
  log.info(
    { callSid, profile: prepared.profile },
    'telnyx outbound call answered: starting its media stream',
  );
  // The context stays in the client state: Telnyx keeps the latest one for the call's later webhooks.
  const clientState = encodeClientState({ ctx: outbound.ref });
  calls.api.after('start stream', callSid, (api) =>
    api
      .streamingStart(callSid, { mediaUrl: prepared.mediaUrl, codec, clientState })
      .catch(async (err: unknown) => {
        // An answered call with no stream is a silent line: end it rather than leave the callee there.
        await api.hangup(callSid).catch(() => undefined);
        throw err;
      }),
  );
  return prepared;
}
