// Exotel's requests (docs/protocols/exotel.md): the Voicebot applet's dynamic URL asks, per call,
// where to stream, and we answer `{"url": "wss://…"}` naming a single-use stream token in the path;
// status callbacks are plain form posts, trusted only as hints for the log.
//
// Exotel signs none of these requests. The stream token (bound to the call's CallSid, single-use,
// short-lived) is what admits a stream, with Basic auth on the upgrade when credentials are set.
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { MediaFormat } from '../../audio/format.js';
import { type CallIntake, OBSERVER_HEADER } from '../../call/carrier-port.js';
import { BadRequestError, BadSignatureError, UnavailableError } from '../../errors.js';
import { boundedStatusWord } from '../call-status.js';
import { exotelE164 } from './numbers.js';

export interface ExotelRoutesOptions {
  intake: CallIntake;
  /** The user and password the media URL carries, when Basic auth is configured. */
  upgradeCredentials: { username: string; password: string } | null;
  /** Refuse every request when nothing can authenticate the stream (NODE_ENV=production without credentials). */
  refuseUnverified: boolean;
}

const CARRIER = 'exotel';
const CALL_SID = /^[A-Za-z0-9_-]{1,64}$/;
const MAX_NUMBER_CHARS = 64;
const MAX_CONTEXT_CHARS = 2048;
const FORM_BODY_LIMIT_BYTES = 64 * 1024;

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

/** The media URL as Exotel is to dial it: Basic auth in it when configured, and the sample rate. */
export function exotelStreamUrl(
  mediaUrl: string,
  credentials: { username: string; password: string } | null,
  sampleRate: number,
): string {
  const url = new URL(mediaUrl);
  if (credentials !== null) {
    // The setters percent-encode what a URL's user and password may not hold.
    url.username = credentials.username;
    url.password = credentials.password;
  }
  url.searchParams.set('sample-rate', String(sampleRate));
  return url.href;
}

export function exotelRoutes(opts: ExotelRoutesOptions): FastifyPluginAsync {
  const { intake } = opts;

  function checkConfigured(): void {
    if (opts.upgradeCredentials !== null || !opts.refuseUnverified) return;
    intake.refused(CARRIER, 'unverified');
    throw new BadSignatureError('Exotel streams cannot be authenticated here: no API key and token are set');
  }

  async function stream(req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    checkConfigured();
    const query = (req.query ?? {}) as Params;
    const callSid = text(query, 'CallSid', 64);
    // The token is bound to the call, so a call with no id cannot be given one.
    if (!CALL_SID.test(callSid)) {
      intake.refused(CARRIER, 'malformed');
      throw new BadRequestError('CallSid is missing or malformed');
    }
    const admission = intake.admit(CARRIER);
    if (admission !== 'admitted') {
      // The applet cannot be told to speak: the refusal sends the flow down its failure path.
      req.log.warn({ callSid, reason: admission }, 'call declined');
      throw new UnavailableError('not taking calls now');
    }
    const outbound = /^outbound/i.test(text(query, 'Direction', 32));
    const context = outbound ? text(query, 'CustomField', MAX_CONTEXT_CHARS) : '';
    const prepared = intake.prepare({
      carrier: CARRIER,
      callSid,
      from: exotelE164(firstText(query, ['CallFrom', 'From'], MAX_NUMBER_CHARS)),
      to: exotelE164(firstText(query, ['CallTo', 'To'], MAX_NUMBER_CHARS)),
      direction: outbound ? 'outbound' : 'inbound',
      mediaFormat: EXOTEL_MEDIA_FORMAT,
      ...(context === '' ? {} : { context }),
    });
    req.log.info(
      { callSid, profile: prepared.profile, direction: outbound ? 'outbound' : 'inbound' },
      'answered',
    );
    const url = exotelStreamUrl(prepared.mediaUrl, opts.upgradeCredentials, EXOTEL_MEDIA_FORMAT.sampleRate);
    return reply.header(OBSERVER_HEADER, prepared.observerToken).send({ url });
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
      checkConfigured();
      const body = req.body;
      if (typeof body !== 'object' || body === null || Array.isArray(body)) {
        intake.refused(CARRIER, 'malformed');
        throw new BadRequestError('the body must be a form or a JSON object');
      }
      const params = body as Params;
      const callSid = text(params, 'CallSid', 64);
      // Unsigned, so only a hint: logged, never acted on.
      req.log.info(
        {
          callSid: CALL_SID.test(callSid) ? callSid : undefined,
          callStatus: boundedStatusWord(params.Status ?? params.CallStatus),
        },
        'call status callback',
      );
      return reply.code(204).send();
    });
  };
}
