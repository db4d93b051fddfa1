// Vonage's webhooks (docs/protocols/vonage.md): the answer URL (GET by default, POST when so
// configured) answers with an NCCO that connects the call to our media WebSocket; the event URL
// takes status events, and for an outbound call (its context reference in the URL's query) reports
// the final status and the machine-detection results. Both are verified as signed webhooks when a
// signature secret is set.
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { MediaFormat } from '../../audio/format.js';
import { type CallIntake, OBSERVER_HEADER } from '../../call/carrier-port.js';
import { BadRequestError, BadSignatureError } from '../../errors.js';
import { boundedStatusWord } from '../call-status.js';
import { CALL_HEADER, CALL_UUID, TOKEN_HEADER } from './codec.js';
import { connectWebsocketNcco, sayHangupNcco, streamHangupNcco } from './ncco.js';
import { vonageFinalStatus, vonageVerdict } from './outbound-events.js';
import { VONAGE_CONTEXT_PARAM } from './placer.js';
import { type ClaimOnce, inMemoryClaimOnce } from '../replay-guard.js';
import { SIGNATURE_TOLERANCE_MS, verifyVonageSignature } from './signature.js';

export interface VonageRoutesOptions {
  intake: CallIntake;
  signatureSecrets: readonly string[];
  applicationId: string | null;
  apiKey: string | null;
  /** Refuse every request when it cannot be verified (NODE_ENV=production without a secret). */
  refuseUnverified: boolean;
  /** Records each token's nonce once; default: in this process only. */
  claimOnce?: ClaimOnce;
  /** The simulated carrier's own secret (src/carriers/simulation-keys.ts), when Vonage has no secret. */
  simulationSecret?: string | null;
  nowMs?: () => number;
}

const CARRIER = 'vonage';
const BODY_LIMIT_BYTES = 64 * 1024;
const MAX_NUMBER_CHARS = 64;
const MAX_CONTEXT_CHARS = 2048;
const EMPTY = Buffer.alloc(0);
const MAX_JTI_CHARS = 128;

/** What the answered call streams: the agent is pre-warmed for it, and the NCCO asks for it. */
export const VONAGE_MEDIA_FORMAT: Readonly<MediaFormat> = Object.freeze({
  encoding: 'linear16',
  sampleRate: 16000,
  channels: 1,
});

type Params = Record<string, unknown>;

function isObject(value: unknown): value is Params {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A single string parameter, bounded; anything else reads as absent. */
function text(params: Params, key: string, maxChars: number): string {
  const value = params[key];
  return typeof value === 'string' && value.length <= maxChars ? value : '';
}

/** Vonage writes phone numbers as E.164 digits without the plus; number routing keys carry it. */
export function e164(value: string): string {
  return /^[1-9]\d{5,14}$/.test(value) ? `+${value}` : value;
}

/** docs/protocols/vonage.md, signed webhooks: over the raw body (empty for GET), iat within tolerance. */
async function verify(routes: Routes, req: FastifyRequest, rawBody: Buffer): Promise<boolean> {
  const { opts, intake, now, claimOnce } = routes;
  const verifiable = opts.signatureSecrets.length > 0;
  // Without a signature secret, only the simulated carrier's signed requests are verified.
  const simulated = !verifiable && req.headers.authorization !== undefined && opts.simulationSecret;
  const secrets = verifiable ? opts.signatureSecrets : simulated ? [simulated] : [];
  if (secrets.length === 0) {
    if (!opts.refuseUnverified) return false;
    intake.refused(CARRIER, 'unverified');
    throw new BadSignatureError('Vonage webhooks cannot be verified here: no signature secret is set');
  }
  const check = await verifyVonageSignature(req.headers.authorization, rawBody, {
    secrets,
    applicationId: opts.applicationId,
    apiKey: opts.apiKey,
    toleranceMs: SIGNATURE_TOLERANCE_MS,
    nowMs: now(),
  });
  if (!check.ok) {
    intake.refused(CARRIER, `signature_${check.reason}`);
    throw new BadSignatureError('the Vonage signature does not verify this request');
  }
  // A token is accepted once, on every instance; it is remembered as long as its iat would pass.
  // A token without a usable jti is claimed by its own bytes: the same token twice is a replay.
  const { jti } = check.claims;
  const key =
    typeof jti === 'string' && jti !== '' && jti.length <= MAX_JTI_CHARS
      ? `vonage-jwt:${jti}`
      : `vonage-jwt-sha256:${createHash('sha256')
          .update(req.headers.authorization ?? '')
          .digest('hex')}`;
  if (!(await claimOnce(key, 2 * SIGNATURE_TOLERANCE_MS))) {
    intake.refused(CARRIER, 'signature_replayed');
    throw new BadSignatureError('the Vonage signature does not verify this request');
  }
  return true;
}

function jsonBody(intake: CallIntake, raw: Buffer): Params {
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    intake.refused(CARRIER, 'malformed');
    throw new BadRequestError('the body is not JSON');
  }
  if (!isObject(body)) {
    intake.refused(CARRIER, 'malformed');
    throw new BadRequestError('the body is not a JSON object');
  }
  return body;
}

async function answer(
  intake: CallIntake,
  req: FastifyRequest,
  reply: FastifyReply,
  params: Params,
  verified: boolean,
): Promise<FastifyReply> {
  const query = (req.query ?? {}) as Params;
  const callSid = text(params, 'uuid', 64);
  if (!CALL_UUID.test(callSid)) {
    intake.refused(CARRIER, 'malformed');
    throw new BadRequestError('uuid is missing or malformed');
  }
  const admission = intake.admit(CARRIER);
  if (admission !== 'admitted') {
    // Declined politely, before any agent is dialed. An NCCO cannot redirect to a URL, so the
    // caller hears why instead.
    req.log.warn({ callSid, reason: admission }, 'call declined');
    const { message, audioUrl } = intake.decline;
    return reply.send(audioUrl ? streamHangupNcco(audioUrl) : sayHangupNcco(message));
  }
  // Our own outbound calls name themselves on the answer URL they were created with (adapter.ts).
  const outbound = text(query, 'direction', 16) === 'outbound';
  const ref = outbound ? text(query, 'context', MAX_CONTEXT_CHARS) : '';
  const context = ref === '' ? null : await intake.outboundContext(CARRIER, ref, verified);
  if (ref !== '' && context === null) {
    intake.refused(CARRIER, 'bad_context');
    throw new BadRequestError('the call context in this URL is not valid');
  }
  const prepared = await intake.prepareOnce({
    carrier: CARRIER,
    callSid,
    from: e164(text(params, 'from', MAX_NUMBER_CHARS)),
    to: e164(text(params, 'to', MAX_NUMBER_CHARS)),
    direction: outbound ? 'outbound' : 'inbound',
    mediaFormat: VONAGE_MEDIA_FORMAT,
    ...(context === null ? {} : { context }),
    verified,
  });
  req.log.info(
    { callSid, profile: prepared.profile, direction: outbound ? 'outbound' : 'inbound' },
    'answered',
  );
  if (prepared.observerToken !== null) reply.header(OBSERVER_HEADER, prepared.observerToken);
  return reply.send(
    connectWebsocketNcco(prepared.mediaUrl, { [CALL_HEADER]: callSid, [TOKEN_HEADER]: prepared.token }),
  );
}

/** The event URL: logged, and for an outbound call its verdict or final status. */
async function onEvent(routes: Routes, req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const { intake } = routes;
  const raw = Buffer.isBuffer(req.body) ? req.body : EMPTY;
  const verified = await verify(routes, req, raw);
  const event = jsonBody(intake, raw);
  const status = boundedStatusWord(event.status);
  const subState = boundedStatusWord(event.sub_state);
  req.log.info(
    {
      callSid: CALL_UUID.test(text(event, 'uuid', 64)) ? text(event, 'uuid', 64) : undefined,
      callStatus: status,
      ...(subState === 'unknown' ? {} : { subState }),
    },
    'call event',
  );
  // An inbound call's events are logged; the call itself is run from its media stream.
  const query = (req.query ?? {}) as Params;
  if (!Object.hasOwn(query, VONAGE_CONTEXT_PARAM)) return reply.code(204).send();
  const resolved = await intake.outboundContext(CARRIER, query[VONAGE_CONTEXT_PARAM], verified);
  if (resolved === null) {
    intake.refused(CARRIER, 'bad_context');
    throw new BadRequestError('the call context in this URL is not valid');
  }
  const callSid = text(event, 'uuid', 64);
  if (!CALL_UUID.test(callSid)) {
    intake.refused(CARRIER, 'malformed');
    throw new BadRequestError('uuid is missing or malformed');
  }
  const verdict = vonageVerdict(status, subState);
  if (verdict !== null) {
    intake.machineVerdict(CARRIER, callSid, verdict);
    return reply.code(204).send();
  }
  const final = vonageFinalStatus(status);
  if (final !== null) {
    const seconds = text(event, 'duration', 16);
    const detail = boundedStatusWord(event.detail);
    intake.outboundStatus({
      carrier: CARRIER,
      callSid,
      from: e164(text(event, 'from', MAX_NUMBER_CHARS)),
      to: e164(text(event, 'to', MAX_NUMBER_CHARS)),
      context: resolved.context,
      status: final,
      reason: detail === 'unknown' ? `Vonage ${status}` : `Vonage ${status} (${detail})`,
      durationMs: /^\d{1,7}$/.test(seconds) ? Number(seconds) * 1000 : null,
    });
  }
  return reply.code(204).send();
}

/** What the handlers share for the routes' lifetime. */
interface Routes {
  opts: VonageRoutesOptions;
  intake: CallIntake;
  now: () => number;
  claimOnce: ClaimOnce;
}

export function vonageRoutes(opts: VonageRoutesOptions): FastifyPluginAsync {
  const { intake } = opts;
  const routes: Routes = {
    opts,
    intake,
    now: opts.nowMs ?? Date.now,
    claimOnce: opts.claimOnce ?? inMemoryClaimOnce(opts.nowMs ?? Date.now),
  };

  return async function plugin(app: FastifyInstance): Promise<void> {
    // The signature covers the raw bytes, so bodies reach the handlers unparsed, whatever their type.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: BODY_LIMIT_BYTES }, (_req, body, done) =>
      done(null, body),
    );

    app.get('/carriers/vonage/answer', async (req, reply) => {
      const verified = await verify(routes, req, EMPTY);
      return answer(intake, req, reply, (req.query ?? {}) as Params, verified);
    });

    app.post('/carriers/vonage/answer', async (req, reply) => {
      const raw = Buffer.isBuffer(req.body) ? req.body : EMPTY;
      const verified = await verify(routes, req, raw);
      return answer(intake, req, reply, jsonBody(intake, raw), verified);
    });

    app.post('/carriers/vonage/events', (req, reply) => onEvent(routes, req, reply));
  };
}
