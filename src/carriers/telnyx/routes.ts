// Telnyx's webhooks (docs/protocols/telnyx.md section 2): `POST /carriers/telnyx/events`,
// verified with Ed25519 when the public key is set. Telnyx is answered 200 at once; what the event
// asks for (answering with a media stream, the polite decline) runs after, through the REST API,
// bounded by its timeout, its failure logged and counted. A call this server placed carries its
// outbound context's reference in `client_state` (section 9): once answered, it is prepared like an
// inbound call and its stream started; its hang-up is its final status, and the detection events
// are its verdict.
import type { KeyObject } from 'node:crypto';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { MediaFormat } from '../../audio/format.js';
import {
  type CallIntake,
  OBSERVER_HEADER,
  type PreparedCall,
  type ResolvedContext,
} from '../../call/carrier-port.js';
import type { TelnyxStreamCodec } from '../../config/types.js';
import { BadRequestError, BadSignatureError } from '../../errors.js';
import type { Metrics } from '../../metrics/metrics.js';
import { RecentIds } from '../recent-ids.js';
import { decodeClientState, encodeClientState } from './client-state.js';
import {
  MACHINE_DETECTION_ENDED,
  MACHINE_GREETING_ENDED,
  telnyxHangupStatus,
  telnyxVerdict,
} from './outbound-events.js';
import type { TelnyxRest } from './rest.js';
import { telnyxStreamRate } from './rest.js';
import { verifyTelnyxSignature } from './signature.js';
import { readCallFields, readTelnyxWebhook, type TelnyxCallFields, type TelnyxWebhook } from './webhook.js';

export interface TelnyxRoutesDeps {
  intake: CallIntake;
  /** Null without an API key: calls cannot be answered, and are logged as such. */
  rest: TelnyxRest | null;
  /** Empty: webhooks are not verified. */
  publicKeys: readonly KeyObject[];
  /** The simulated carrier's own key (src/carriers/simulation-keys.ts), when Telnyx has no public key. */
  simulationPublicKeys?: readonly KeyObject[];
  /** Unverified webhooks are refused (NODE_ENV=production without TELNYX_PUBLIC_KEY). */
  refuseUnverified: boolean;
  codec: TelnyxStreamCodec;
  logger: Logger;
  metrics: Metrics;
  now: () => number;
}

export const TELNYX_EVENTS_PATH = '/carriers/telnyx/events';
const BODY_LIMIT_BYTES = 64 * 1024;
const BAD_REQUEST = new BadRequestError('').code;
/** A repeated `call.initiated` (a retry, or a replay inside the signature's 300 s) is answered once. */
const REPEAT_MEMORY_MS = 10 * 60_000;
const REPEAT_MEMORY_ENTRIES = 10_000;
const MAX_PARTY_CHARS = 64;

/** A bad request counted under its own refusal reason rather than `malformed`. */
function refusal(message: string, reason: string): Error {
  return Object.assign(new BadRequestError(message), { refusal: reason });
}

/** The format the stream will bring for the codec asked for in the answer. */
export function telnyxMediaFormat(codec: TelnyxStreamCodec): MediaFormat {
  const encoding = codec === 'PCMU' ? 'mulaw' : codec === 'PCMA' ? 'alaw' : 'linear16';
  return { encoding, sampleRate: telnyxStreamRate(codec), channels: 1 };
}

export function telnyxRoutes(deps: TelnyxRoutesDeps): FastifyPluginAsync {
  const { intake, rest, metrics } = deps;
  const log = deps.logger.child({ carrier: 'telnyx' });
  const initiated = new RecentIds({
    ttlMs: REPEAT_MEMORY_MS,
    maxEntries: REPEAT_MEMORY_ENTRIES,
    now: deps.now,
  });
  // A repeated `call.answered` of an outbound call starts its stream once.
  const answered = new RecentIds({
    ttlMs: REPEAT_MEMORY_MS,
    maxEntries: REPEAT_MEMORY_ENTRIES,
    now: deps.now,
  });
  const pending = new Set<Promise<void>>();

  /** Runs a REST request once the webhook has been answered; never throws. */
  function after(operation: string, callSid: string, request: (api: TelnyxRest) => Promise<void>): void {
    if (rest === null) {
      log.error({ callSid, operation }, 'TELNYX_API_KEY is not set: the call cannot be controlled');
      return;
    }
    const task = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => request(rest))
      .then(
        () => metrics.carrierApiRequests.inc({ carrier: 'telnyx', operation, outcome: 'ok' }),
        (err: Error) => {
          metrics.carrierApiRequests.inc({ carrier: 'telnyx', operation, outcome: 'failed' });
          log.warn({ callSid, operation, err: err.message }, 'telnyx request failed');
        },
      );
    pending.add(task);
    void task.finally(() => pending.delete(task));
  }

  /** Whether the webhook was verified; with no public key (outside production) nothing can verify it. */
  function verify(req: FastifyRequest, raw: Buffer): boolean {
    // Without a public key, only the simulated carrier's signed webhooks are verified.
    const signed = req.headers['telnyx-signature-ed25519'] !== undefined;
    const publicKeys =
      deps.publicKeys.length > 0 ? deps.publicKeys : signed ? (deps.simulationPublicKeys ?? []) : [];
    if (publicKeys.length === 0) {
      if (!deps.refuseUnverified) return false;
      intake.refused('telnyx', 'unverified');
      throw new BadSignatureError('telnyx webhooks are refused: TELNYX_PUBLIC_KEY is not set');
    }
    const check = verifyTelnyxSignature(publicKeys, {
      signature: req.headers['telnyx-signature-ed25519'],
      timestamp: req.headers['telnyx-timestamp'],
      rawBody: raw,
      nowMs: deps.now(),
    });
    if (!check.ok) {
      intake.refused('telnyx', `signature_${check.reason}`);
      throw new BadSignatureError(`telnyx-signature-ed25519 does not verify this request (${check.reason})`);
    }
    return true;
  }

  /**
   * The call prepared in the core for its stream: inbound, or outbound with its context.
   * Telnyx retries a webhook that failed, so a failure forgets it: the retry must be answered, not
   * taken for a repeat.
   */
  async function prepareCall(
    call: TelnyxCallFields,
    seen: RecentIds,
    context?: ResolvedContext,
  ): Promise<PreparedCall> {
    try {
      // Once per call across the fleet and restarts (a replay within the signature's tolerance
      // gains nothing); `seen` spares this instance the store for the repeats it has seen.
      return await intake.prepareOnce({
        carrier: 'telnyx',
        callSid: call.callSid,
        from: call.from,
        to: call.to,
        direction: context === undefined ? 'inbound' : 'outbound',
        mediaFormat: telnyxMediaFormat(deps.codec),
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
  async function onInitiated(webhook: TelnyxWebhook): Promise<PreparedCall | undefined> {
    const call = readCallFields(webhook);
    const { callSid } = call;
    if (call.direction !== 'incoming') {
      // Our own outbound call: its stream was asked for when it was placed.
      log.info({ callSid, direction: call.direction }, 'telnyx call initiated');
      return;
    }
    if (initiated.seen(callSid)) {
      log.warn({ callSid }, 'repeated call.initiated ignored');
      return;
    }
    const admission = intake.admit('telnyx');
    if (admission !== 'admitted') {
      // Declined before any agent is dialed: answered without a stream, the caller hears why
      // (call.answered → speak), then the call is hung up (call.speak.ended → hangup).
      log.warn({ callSid, reason: admission }, 'call declined');
      after('answer call', callSid, (api) =>
        api.answer(callSid, { codec: deps.codec, clientState: encodeClientState({ decline: true }) }),
      );
      return;
    }
    if (rest === null) {
      log.error({ callSid }, 'TELNYX_API_KEY is not set: the call cannot be answered');
      return;
    }
    const prepared = await prepareCall(call, initiated);
    log.info({ callSid, profile: prepared.profile }, 'telnyx call initiated: answering with a media stream');
    after('answer call', callSid, (api) =>
      api.answer(callSid, {
        mediaUrl: prepared.mediaUrl,
        codec: deps.codec,
        clientState: encodeClientState({ token: prepared.token }),
      }),
    );
    return prepared;
  }

  /** Speaks (or plays) the decline; the call is hung up on `call.speak.ended` / `call.playback.ended`. */
  function declineAnswered(callSid: string, ctx?: string): void {
    // If the message cannot be played or spoken, the caller is not left on a silent line.
    const { message, audioUrl } = intake.decline;
    const state = encodeClientState({ decline: true, ...(ctx === undefined ? {} : { ctx }) });
    after(audioUrl ? 'play audio' : 'speak', callSid, (api) =>
      (audioUrl ? api.playback(callSid, audioUrl, state) : api.speak(callSid, message, state)).catch(
        async (err: unknown) => {
          await api.hangup(callSid).catch(() => undefined);
          throw err;
        },
      ),
    );
  }

  /** The outbound context a call's client state carries; undefined for a call this server did not place. */
  async function outboundOf(
    webhook: TelnyxWebhook,
    call: TelnyxCallFields,
  ): Promise<ResolvedContext | undefined> {
    const ref = decodeClientState(call.clientState)?.ctx;
    if (ref === undefined) return undefined;
    const resolved = await intake.outboundContext('telnyx', ref, true);
    if (resolved === null) {
      throw refusal(
        `telnyx ${webhook.eventType}: the call context in client_state is not valid`,
        'bad_context',
      );
    }
    return resolved;
  }

  /** Our outbound call was answered: prepared as an inbound call is, then its stream started. */
  async function onOutboundAnswered(
    call: TelnyxCallFields,
    outbound: ResolvedContext,
  ): Promise<PreparedCall | undefined> {
    const { callSid } = call;
    if (answered.seen(callSid)) {
      log.warn({ callSid }, 'repeated call.answered ignored');
      return;
    }
    if (intake.admit('telnyx') !== 'admitted') {
      declineAnswered(callSid, outbound.ref);
      return;
    }
    if (rest === null) {
      log.error({ callSid }, 'TELNYX_API_KEY is not set: the call cannot be bridged');
      return;
    }
    const prepared = await prepareCall(call, answered, outbound);
    log.info(
      { callSid, profile: prepared.profile },
      'telnyx outbound call answered: starting its media stream',
    );
    // The context stays in the client state: Telnyx keeps the latest one for the call's later webhooks.
    const clientState = encodeClientState({ ctx: outbound.ref });
    after('start stream', callSid, (api) =>
      api
        .streamingStart(callSid, { mediaUrl: prepared.mediaUrl, codec: deps.codec, clientState })
        .catch(async (err: unknown) => {
          // An answered call with no stream is a silent line: end it rather than leave the callee there.
          await api.hangup(callSid).catch(() => undefined);
          throw err;
        }),
    );
    return prepared;
  }

  async function onEvent(webhook: TelnyxWebhook): Promise<PreparedCall | undefined> {
    switch (webhook.eventType) {
      case 'call.initiated':
        return onInitiated(webhook);
      case 'call.answered': {
        const call = readCallFields(webhook);
        const state = decodeClientState(call.clientState);
        if (state?.decline) {
          declineAnswered(call.callSid, state.ctx);
          return;
        }
        const outbound = await outboundOf(webhook, call);
        if (outbound) return onOutboundAnswered(call, outbound);
        log.info({ callSid: call.callSid }, 'telnyx call answered');
        return;
      }
      case MACHINE_DETECTION_ENDED:
      case MACHINE_GREETING_ENDED: {
        const call = readCallFields(webhook);
        const report = telnyxVerdict(webhook.eventType, webhook.payload.result);
        if (report === null) {
          throw new BadRequestError(`telnyx ${webhook.eventType}: payload.result is missing or not a word`);
        }
        await outboundOf(webhook, call);
        log.info({ callSid: call.callSid, result: report.raw }, 'telnyx answering-machine detection');
        intake.machineVerdict('telnyx', call.callSid, report);
        return;
      }
      case 'call.speak.ended':
      case 'call.playback.ended': {
        const call = readCallFields(webhook);
        if (decodeClientState(call.clientState)?.decline)
          after('hang up call', call.callSid, (api) => api.hangup(call.callSid));
        return;
      }
      case 'call.hangup': {
        const call = readCallFields(webhook);
        const cause = webhook.payload.hangup_cause;
        log.info(
          { callSid: call.callSid, hangupCause: typeof cause === 'string' ? cause.slice(0, 64) : undefined },
          'telnyx call hung up',
        );
        const outbound = await outboundOf(webhook, call);
        if (outbound) {
          const { status, reason } = telnyxHangupStatus(cause);
          intake.outboundStatus({
            carrier: 'telnyx',
            callSid: call.callSid,
            from: call.from.slice(0, MAX_PARTY_CHARS),
            to: call.to.slice(0, MAX_PARTY_CHARS),
            context: outbound.context,
            status,
            reason,
            // Telnyx's times of the call count its ringing too; the call's record has the talk time.
            durationMs: null,
          });
        }
        return;
      }
      case 'streaming.failed': {
        const call = readCallFields(webhook);
        const reason = webhook.payload.failure_reason;
        log.warn(
          { callSid: call.callSid, reason: typeof reason === 'string' ? reason.slice(0, 64) : undefined },
          'telnyx media stream failed',
        );
        return;
      }
      default:
        log.debug({ eventType: webhook.eventType }, 'telnyx event acknowledged');
    }
  }

  return async function plugin(app: FastifyInstance): Promise<void> {
    // Signatures are checked on the bytes as received: every body arrives as the raw Buffer.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: BODY_LIMIT_BYTES }, (_req, body, done) =>
      done(null, body),
    );
    app.addHook('onClose', async () => {
      await Promise.allSettled([...pending]);
    });

    app.post(
      TELNYX_EVENTS_PATH,
      { bodyLimit: BODY_LIMIT_BYTES },
      async (req: FastifyRequest, reply: FastifyReply) => {
        const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
        const verified = verify(req, raw);
        let prepared: PreparedCall | undefined;
        try {
          const webhook = readTelnyxWebhook(raw);
          if (!intake.allowance(verified).carrierApi) {
            // Whatever Telnyx is told to do is a call on its API: an unverified webhook causes none.
            // Acknowledged, so a real Telnyx does not retry it, and counted.
            intake.refused('telnyx', 'unverified');
            req.log.info(
              { eventType: webhook.eventType },
              'unverified telnyx webhook acknowledged, not acted on',
            );
            return reply.code(200).send({ received: true });
          }
          prepared = await onEvent(webhook);
        } catch (err) {
          const { code, refusal: reason } = err as { code?: unknown; refusal?: unknown };
          if (code === BAD_REQUEST)
            intake.refused('telnyx', typeof reason === 'string' ? reason : 'malformed');
          throw err;
        }
        if (prepared?.observerToken) reply.header(OBSERVER_HEADER, prepared.observerToken);
        // Telnyx wants a 200; anything else sends the event to the failover URL.
        return reply.code(200).send({ received: true });
      },
    );
  };
}
