// Exotel's requests (docs/protocols/exotel.md): the Voicebot applet's dynamic URL asks, per call,
// where to stream, and we answer `{"url": "wss://…"}` naming a single-use stream token in the path;
// status callbacks are plain form posts, trusted only as hints: the final status of an outbound call
// is read back from Exotel's API before it counts (section 9).
//
// Exotel signs none of these requests: a request is verified when it comes from EXOTEL_ALLOWED_CIDRS
// (docs/security.md). Unset, production refuses Exotel's routes; elsewhere a request is answered as
// unverified, which the core lets cost nothing until its stream presents the token and the call's
// own Basic credentials.
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { MediaFormat } from '../../audio/format.js';
import {
  type CallIntake,
  OBSERVER_HEADER,
  type OutboundFinalStatus,
  type ResolvedContext,
} from '../../call/carrier-port.js';
import type { OutboundContext } from '../../call/outbound/outbound-context.js';
import { BadRequestError, BadSignatureError } from '../../errors.js';
import { boundedStatusWord, type CarrierCallStatus } from '../call-status.js';
import type { CallPlacer } from '../../outbound/ports.js';
import { exotelE164 } from './numbers.js';

export interface ExotelRoutesOptions {
  intake: CallIntake;
  /** The Basic credentials of the media URL that carries `streamToken`: one call's, once. */
  credentialsFor(streamToken: string): { username: string; password: string };
  /** Whether an address is in EXOTEL_ALLOWED_CIDRS; null when it is unset. */
  fromAllowedNetwork: ((address: string) => boolean) | null;
  /** Refuse every request while nothing can verify one (NODE_ENV=production without EXOTEL_ALLOWED_CIDRS). */
  refuseUnverified: boolean;
  /** The placer of outbound calls: the contexts of calls placed here, and their status read back. */
  placer?: Pick<CallPlacer, 'contextOf' | 'status'> | null;
}

const CARRIER = 'exotel';
const CALL_SID = /^[A-Za-z0-9_-]{1,64}$/;
const MAX_NUMBER_CHARS = 64;
const MAX_CONTEXT_CHARS = 2048;
const FORM_BODY_LIMIT_BYTES = 64 * 1024;
/** An outbound context's reference (src/call/outbound/outbound-context.ts) starts so; anything else in `CustomField` is not ours. */
const CONTEXT_REF_PREFIX = 'r1.';

/** Final statuses of a call, as the status callback and the API word them, in the outbound room's words. */
const FINAL_STATUSES: Readonly<Partial<Record<CarrierCallStatus, OutboundFinalStatus>>> = Object.freeze({
  completed: 'completed',
  busy: 'busy',
  'no-answer': 'no_answer',
  failed: 'failed',
  canceled: 'canceled',
});

/** The stream's format: linear PCM at 8 kHz, which the agent takes as is. */
export const EXOTEL_MEDIA_FORMAT: Readonly<MediaFormat> = Object.freeze({
  encoding: 'linear16',
  sampleRate: 8000,
  channels: 1,
});

type Params = Record<string, unknown>;

function text(params: Params, key: string, maxChars: number): string {
  const value = params[key];
  return typeof value === 'string' && value.length <= maxChars ? value : '';
}

/** The first of several spellings Exotel uses for one value (`CallFrom`, `From`). */
function firstText(params: Params, keys: readonly string[], maxChars: number): string {
  for (const key of keys) {
    const value = text(params, key, maxChars);
    if (value !== '') return value;
  }
  return '';
}

/** The media URL as Exotel is to dial it: the call's own Basic auth in it, and the sample rate. */
export function exotelStreamUrl(
  mediaUrl: string,
  credentials: { username: string; password: string },
  sampleRate: number,
): string {
  const url = new URL(mediaUrl);
  // The setters percent-encode what a URL's user and password may not hold.
  url.username = credentials.username;
  url.password = credentials.password;
  url.searchParams.set('sample-rate', String(sampleRate));
  return url.href;
}

/**
 * Whether a request is Exotel's as far as anything here can tell: from EXOTEL_ALLOWED_CIDRS when
 * set (anything else is refused); unverified when unset, and refused then under production.
 */
function verify(opts: ExotelRoutesOptions, req: FastifyRequest): boolean {
  const { intake } = opts;
  if (opts.fromAllowedNetwork === null) {
    if (!opts.refuseUnverified) return false;
    intake.refused(CARRIER, 'unverified');
    throw new BadSignatureError('Exotel requests are refused here until EXOTEL_ALLOWED_CIDRS is set');
  }
  if (opts.fromAllowedNetwork(req.ip)) return true;
  intake.refused(CARRIER, 'network');
  // One line, no stack: anyone may knock, and a refusal is not a fault of the server.
  req.log.warn(
    { carrier: CARRIER, address: req.ip },
    'exotel request from outside EXOTEL_ALLOWED_CIDRS refused',
  );
  throw new BadSignatureError('this address is not one of EXOTEL_ALLOWED_CIDRS');
}

/**
 * The context of an outbound call, by the reference kept when it was placed here, else the one in
 * the `CustomField` Exotel passed back; undefined for an inbound call; null for a `CustomField`
 * that claims to be ours and is not, or that an unverified request names (it reads no context).
 */
async function contextOf(
  opts: ExotelRoutesOptions,
  callSid: string,
  params: Params,
  verified: boolean,
): Promise<ResolvedContext | undefined | null> {
  const { intake } = opts;
  const field = text(params, 'CustomField', MAX_CONTEXT_CHARS);
  const claimed = field.startsWith(CONTEXT_REF_PREFIX);
  if (!intake.allowance(verified).outboundContext) return claimed ? null : undefined;
  const kept = opts.placer?.contextOf?.(callSid) ?? null;
  if (kept === null && !claimed) return undefined;
  return intake.outboundContext(CARRIER, kept ?? field, verified);
}

/** A final status callback of an outbound call counts once Exotel's API says the same call ended. */
async function confirmFinalStatus(
  opts: ExotelRoutesOptions,
  req: FastifyRequest,
  callSid: string,
  context: OutboundContext,
  params: Params,
) {
  const { intake, placer } = opts;
  if (!placer) return;
  let state;
  try {
    state = await placer.status(callSid);
  } catch (err) {
    // The dialer reads the call's status itself later; a hint unconfirmed is dropped.
    req.log.warn({ callSid, err: (err as Error).message }, 'could not confirm a status callback');
    return;
  }
  const status = FINAL_STATUSES[state.status];
  if (status === undefined) {
    req.log.warn(
      { callSid, apiStatus: state.carrierStatus },
      'status callback not confirmed: the call goes on',
    );
    return;
  }
  const seconds = Number(text(params, 'ConversationDuration', 16) || text(params, 'Duration', 16));
  intake.outboundStatus({
    carrier: CARRIER,
    callSid,
    from: exotelE164(firstText(params, ['CallerId', 'CallTo', 'To'], MAX_NUMBER_CHARS)),
    to: exotelE164(firstText(params, ['CallFrom', 'From'], MAX_NUMBER_CHARS)),
    context,
    status,
    reason: status === 'completed' ? null : `exotel status ${state.carrierStatus}`,
    durationMs: Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : null,
  });
}

export function exotelRoutes(opts: ExotelRoutesOptions): FastifyPluginAsync {
  const { intake } = opts;

  async function stream(req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const verified = verify(opts, req);
    const query = (req.query ?? {}) as Params;
    const callSid = text(query, 'CallSid', 64);
    // The token is bound to the call, so a call with no id cannot be given one.
    if (!CALL_SID.test(callSid)) {
      intake.refused(CARRIER, 'malformed');
      throw new BadRequestError('CallSid is missing or malformed');
    }
    const admission = intake.admit(CARRIER);
    if (admission !== 'admitted') {
      // The applet cannot be told to speak: the refusal sends the flow down its failure path. The
      // intake logged the decline in one line; a thrown error would log it again, with a stack.
      return reply
        .code(503)
        .send({ error: { code: 'CALLBRIDGE_UNAVAILABLE', message: 'not taking calls now' } });
    }
    const context = await contextOf(opts, callSid, query, verified);
    if (context === null) {
      intake.refused(CARRIER, 'bad_context');
      throw new BadRequestError('the call context in CustomField is not valid');
    }
    const outbound = context !== undefined || /^outbound/i.test(text(query, 'Direction', 32));
    // An outbound call's `From` is the number called (it was rung first), `CallTo` the ExoPhone
    // (unverified: section 9); the record names them as for any outbound call.
    const caller = exotelE164(firstText(query, ['CallFrom', 'From'], MAX_NUMBER_CHARS));
    const called = exotelE164(firstText(query, ['CallTo', 'To'], MAX_NUMBER_CHARS));
    const prepared = await intake.prepareOnce({
      carrier: CARRIER,
      callSid,
      from: outbound ? called : caller,
      to: outbound ? caller : called,
      direction: outbound ? 'outbound' : 'inbound',
      mediaFormat: EXOTEL_MEDIA_FORMAT,
      ...(context === undefined ? {} : { context }),
      verified,
    });
    req.log.info(
      { callSid, profile: prepared.profile, direction: outbound ? 'outbound' : 'inbound' },
      'answered',
    );
    const url = exotelStreamUrl(
      prepared.mediaUrl,
      opts.credentialsFor(prepared.token),
      EXOTEL_MEDIA_FORMAT.sampleRate,
    );
    if (prepared.observerToken !== null) reply.header(OBSERVER_HEADER, prepared.observerToken);
    return reply.send({ url });
  }

  return async function plugin(app: FastifyInstance): Promise<void> {
    app.removeAllContentTypeParsers();
    app.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT_BYTES },
      (_req, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))),
    );
    app.addContentTypeParser(
      'application/json',
      { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT_BYTES },
      (_req, body, done) => {
        try {
          done(null, JSON.parse(body as string));
        } catch {
          intake.refused(CARRIER, 'malformed');
          done(new BadRequestError('the body is not JSON'), undefined);
        }
      },
    );

    // Anything else is not what Exotel posts: refused and counted like any malformed request.
    app.addContentTypeParser('*', { bodyLimit: FORM_BODY_LIMIT_BYTES }, (_req, _payload, done) => {
      intake.refused(CARRIER, 'malformed');
      done(new BadRequestError('the body must be a form or JSON'), undefined);
    });

    app.get('/carriers/exotel/stream', stream);

    app.post('/carriers/exotel/status', async (req, reply) => {
      const verified = verify(opts, req);
      const body = req.body;
      if (typeof body !== 'object' || body === null || Array.isArray(body)) {
        intake.refused(CARRIER, 'malformed');
        throw new BadRequestError('the body must be a form or a JSON object');
      }
      const params = body as Params;
      const callSid = text(params, 'CallSid', 64);
      const word = boundedStatusWord(params.Status ?? params.CallStatus);
      if (!CALL_SID.test(callSid)) {
        intake.refused(CARRIER, 'malformed');
        throw new BadRequestError('CallSid is missing or malformed');
      }
      req.log.info({ callSid, callStatus: word }, 'call status callback');
      // Unsigned, so only a hint: an outbound call's end is read back from the API before it counts,
      // and only for a verified request (an unverified one costs no API read).
      const resolved = await contextOf(opts, callSid, params, verified);
      if (resolved === null) {
        intake.refused(CARRIER, 'bad_context');
        throw new BadRequestError('the call context in CustomField is not valid');
      }
      if (resolved && Object.hasOwn(FINAL_STATUSES, word) && intake.allowance(verified).carrierApi)
        void confirmFinalStatus(opts, req, callSid, resolved.context, params);
      return reply.code(204).send();
    });
  };
}
