// Plivo's webhooks (docs/protocols/plivo.md): the answer URL, answered with the bidirectional
// <Stream> XML; the hang-up URL, which ends an outbound call's attempt with its final status; the
// machine-detection URL of an outbound call; the stream's status callbacks, logged; and the
// transfer route a transfer points the call at, answered with the <Dial> of its target. Each is
// verified with X-Plivo-Signature-V3 when the auth token is set, and a nonce is accepted once.
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { MULAW_8K } from '../../audio/format.js';
import { type CallAnnouncement, type CallIntake, OBSERVER_HEADER } from '../../call/carrier-port.js';
import type { OutboundContext } from '../../call/outbound/outbound-context.js';
import { BadRequestError, BadSignatureError } from '../../errors.js';
import type { Metrics } from '../../metrics/metrics.js';
import { type ClaimOnce, inMemoryClaimOnce } from '../replay-guard.js';
import { isCarrierId } from '../wire.js';
import { plivoFinalStatus, plivoHangupReason, plivoVerdict } from './outbound-status.js';
import { PLIVO_CONTEXT_PARAM, PLIVO_MACHINE_PATH } from './placer.js';
import { PLIVO_TRANSFER_PATH } from './rest.js';
import { type PlivoParams, verifyPlivoSignatureV3 } from './signature.js';
import { dialXml, isDialTarget, playHangupXml, redirectXml, speakHangupXml, streamXml } from './xml.js';

export interface PlivoRoutesDeps {
  intake: CallIntake;
  /** Null: requests are not verified. */
  authToken: string | null;
  /** Unverified requests are refused (NODE_ENV=production without PLIVO_AUTH_TOKEN). */
  refuseUnverified: boolean;
  /** The base URL Plivo calls this server at (signatures are over it), read when needed. */
  publicUrl: () => string;
  logger: Logger;
  metrics: Metrics;
  now: () => number;
  /** The shared store's claimOnce, so a replayed request is refused on every instance. */
  claimOnce?: ClaimOnce;
  /** The simulated carrier's own key (src/carriers/simulation-keys.ts), when Plivo has no credentials. */
  simulationAuthToken?: string | null;
}

export const PLIVO_ANSWER_PATH = '/carriers/plivo/answer';
export const PLIVO_HANGUP_PATH = '/carriers/plivo/hangup';
export const PLIVO_STREAM_STATUS_PATH = '/carriers/plivo/stream-status';

const BODY_LIMIT_BYTES = 64 * 1024;
/**
 * Plivo's V3 signature has a nonce but no timestamp, so a captured request stays valid: its nonce is
 * remembered for a day, which outlives any call and any retry Plivo makes (docs/security.md).
 */
const NONCE_MEMORY_MS = 24 * 60 * 60_000;
const XML = 'text/xml; charset=utf-8';
const MAX_FIELD_CHARS = 256;
const MAX_CONTEXT_CHARS = 2048;

function parseForm(raw: Buffer): PlivoParams {
  const params: PlivoParams = Object.create(null);
  for (const [key, value] of new URLSearchParams(raw.toString('utf8'))) {
    const seen = params[key];
    if (seen === undefined) params[key] = value;
    else params[key] = Array.isArray(seen) ? [...seen, value] : [seen, value];
  }
  return params;
}

/** One value of a form field, bounded; '' when absent, repeated or too long. */
function field(params: PlivoParams, key: string): string {
  const value = params[key];
  return typeof value === 'string' && value.length <= MAX_FIELD_CHARS ? value : '';
}

/** The `context` query parameter of a webhook URL we gave Plivo, bounded; undefined when absent. */
function answerContext(url: string): string | undefined {
  const queryAt = url.indexOf('?');
  if (queryAt === -1) return undefined;
  const context = new URLSearchParams(url.slice(queryAt + 1)).get(PLIVO_CONTEXT_PARAM);
  return context !== null && context !== '' && context.length <= MAX_CONTEXT_CHARS ? context : undefined;
}

/** A non-negative count of seconds off the wire, in milliseconds; null when it is not one. */
function secondsMs(value: string): number | null {
  if (!/^\d{1,7}$/.test(value)) return null;
  return Number(value) * 1000;
}

/** Plivo writes numbers without the `+` (`14155551234`); routing keys are E.164. */
export function plivoNumber(value: string): string {
  return /^[1-9]\d{6,14}$/.test(value) ? `+${value}` : value;
}

/** What the request readers share for the routes' lifetime. */
interface PlivoRequests {
  deps: PlivoRoutesDeps;
  intake: CallIntake;
  log: Logger;
  claimOnce: ClaimOnce;
}

/** Whether the request was verified; with no auth token (outside production) nothing can verify it. */
async function verify(ctx: PlivoRequests, req: FastifyRequest, params: PlivoParams): Promise<boolean> {
  const { deps, intake, claimOnce } = ctx;
  // Without an auth token, only the simulated carrier's signed requests are verified.
  const signed = req.headers['x-plivo-signature-v3'] !== undefined;
  const authToken = deps.authToken ?? (signed ? (deps.simulationAuthToken ?? null) : null);
  if (authToken === null) {
    if (!deps.refuseUnverified) return false;
    intake.refused('plivo', 'unverified');
    throw new BadSignatureError('plivo requests are refused: PLIVO_AUTH_TOKEN is not set');
  }
  const check = verifyPlivoSignatureV3({
    authToken,
    signature: req.headers['x-plivo-signature-v3'],
    nonce: req.headers['x-plivo-signature-v3-nonce'],
    // The URL exactly as Plivo called it: the public base, then the path and query as received.
    url: `${deps.publicUrl()}${req.url}`,
    params,
  });
  if (!check.ok) {
    intake.refused('plivo', `signature_${check.reason}`);
    throw new BadSignatureError(`X-Plivo-Signature-V3 does not verify this request (${check.reason})`);
  }
  // Claimed only once verified, so forged requests cannot fill the store; claimed in the shared
  // store, so a replay is refused by every instance and after a restart.
  if (!(await claimOnce(`plivo-nonce:${check.nonce}`, NONCE_MEMORY_MS))) {
    intake.refused('plivo', 'signature_replayed');
    throw new BadSignatureError('X-Plivo-Signature-V3-Nonce was already used');
  }
  return true;
}

async function readVerified(
  ctx: PlivoRequests,
  req: FastifyRequest,
): Promise<{ params: PlivoParams; verified: boolean }> {
  const params = parseForm(Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0));
  return { params, verified: await verify(ctx, req, params) };
}

function callUuid({ intake }: PlivoRequests, params: PlivoParams): string {
  const uuid = field(params, 'CallUUID');
  if (!isCarrierId(uuid) || uuid.length > 64) {
    intake.refused('plivo', 'malformed');
    throw new BadRequestError('CallUUID is missing or malformed');
  }
  return uuid;
}

/**
 * An outbound call's webhook brings its CallUUID, which the create request's answer did not (it
 * named the request: `RequestUUID` here): the attempt follows the call by it from now on.
 */
function identify(
  { intake, log }: PlivoRequests,
  context: OutboundContext,
  callSid: string,
  params: PlivoParams,
): void {
  const requestUuid = field(params, 'RequestUUID');
  if (requestUuid !== '' && requestUuid !== callSid) {
    log.debug({ callSid, requestUuid: requestUuid.slice(0, 64) }, 'plivo call named for its request');
  }
  intake.outboundCallIdentified('plivo', context, callSid);
}

/** The outbound context of a webhook URL we gave Plivo; undefined for a call we did not place. */
async function outboundContext(
  { intake }: PlivoRequests,
  req: FastifyRequest,
  verified: boolean,
): Promise<OutboundContext | undefined> {
  const queryAt = req.url.indexOf('?');
  const ref =
    queryAt === -1 ? null : new URLSearchParams(req.url.slice(queryAt + 1)).get(PLIVO_CONTEXT_PARAM);
  if (ref === null) return undefined;
  const resolved = await intake.outboundContext('plivo', ref, verified);
  if (resolved === null) {
    intake.refused('plivo', 'bad_context');
    throw new BadRequestError('the call context in this URL is not valid');
  }
  return resolved.context;
}

export function plivoRoutes(deps: PlivoRoutesDeps): FastifyPluginAsync {
  const { intake } = deps;
  const log = deps.logger.child({ carrier: 'plivo' });
  const ctx: PlivoRequests = { deps, intake, log, claimOnce: deps.claimOnce ?? inMemoryClaimOnce(deps.now) };

  async function answer(req: FastifyRequest, reply: FastifyReply) {
    const { params, verified } = await readVerified(ctx, req);
    const callSid = callUuid(ctx, params);
    // An outbound call's context rides on the answer URL it was placed with (signed with it).
    const context = answerContext(req.url);
    const opened = context === undefined ? null : await intake.outboundContext('plivo', context, verified);
    if (context !== undefined && opened === null) {
      intake.refused('plivo', 'bad_context');
      throw new BadRequestError('the call context in this URL is not valid');
    }
    if (opened !== null) identify(ctx, opened.context, callSid, params);
    const admission = intake.admit('plivo');
    reply.header('content-type', XML);
    if (admission !== 'admitted') {
      // Declined politely, before any agent is dialed: the caller hears why, or goes elsewhere.
      deps.metrics.callsDeclined.inc({ carrier: 'plivo', reason: admission });
      log.warn({ callSid, reason: admission }, 'call declined');
      const { message, redirectUrl, audioUrl } = intake.decline;
      if (redirectUrl) return reply.send(redirectXml(redirectUrl));
      return reply.send(audioUrl ? playHangupXml(audioUrl) : speakHangupXml(message));
    }
    const announcement: CallAnnouncement = {
      carrier: 'plivo',
      callSid,
      from: plivoNumber(field(params, 'From')),
      to: plivoNumber(field(params, 'To')),
      direction: field(params, 'Direction') === 'outbound' ? 'outbound' : 'inbound',
      mediaFormat: MULAW_8K,
      verified,
    };
    if (opened !== null) announcement.context = opened;
    const prepared = await intake.prepareOnce(announcement);
    log.info({ callSid, profile: prepared.profile }, 'plivo answer URL answered with a media stream');
    if (prepared.observerToken !== null) reply.header(OBSERVER_HEADER, prepared.observerToken);
    return reply.send(
      streamXml({
        url: prepared.mediaUrl,
        contentType: 'audio/x-mulaw;rate=8000',
        statusCallbackUrl: `${deps.publicUrl()}${PLIVO_STREAM_STATUS_PATH}`,
      }),
    );
  }

  async function hangup(req: FastifyRequest, reply: FastifyReply) {
    const { params, verified } = await readVerified(ctx, req);
    const context = await outboundContext(ctx, req, verified);
    const callSid = context ? callUuid(ctx, params) : field(params, 'CallUUID');
    const callStatus = field(params, 'CallStatus');
    const hangupCause = field(params, 'HangupCause');
    log.info(
      {
        callSid,
        callStatus: callStatus.slice(0, 32),
        hangupCause: field(params, 'HangupCauseName') || hangupCause,
      },
      'plivo call hung up',
    );
    if (context) {
      const status = plivoFinalStatus(callStatus, hangupCause);
      if (status === null) {
        intake.refused('plivo', 'malformed');
        throw new BadRequestError('CallStatus and HangupCause name no final status');
      }
      // A call never answered has no webhook before this one.
      identify(ctx, context, callSid, params);
      intake.outboundStatus({
        carrier: 'plivo',
        callSid,
        from: plivoNumber(field(params, 'From').slice(0, 64)),
        to: plivoNumber(field(params, 'To').slice(0, 64)),
        context,
        status,
        reason: plivoHangupReason(field(params, 'HangupCauseName'), hangupCause),
        durationMs: secondsMs(field(params, 'Duration')),
      });
    }
    return reply.code(200).send();
  }

  // The asynchronous machine-detection verdict of an outbound call (machine_detection_url).
  async function machine(req: FastifyRequest, reply: FastifyReply) {
    const { params, verified } = await readVerified(ctx, req);
    const callSid = callUuid(ctx, params);
    // Plivo reports no detection time: the session measures it from the answer.
    const report = plivoVerdict(field(params, 'Machine'));
    if (report === null) {
      intake.refused('plivo', 'malformed');
      throw new BadRequestError('Machine must be true or false');
    }
    const context = await outboundContext(ctx, req, verified);
    if (context) identify(ctx, context, callSid, params);
    intake.machineVerdict('plivo', callSid, report);
    return reply.code(200).send();
  }

  async function transfer(req: FastifyRequest, reply: FastifyReply) {
    await readVerified(ctx, req);
    const to = new URLSearchParams(req.url.slice(req.url.indexOf('?') + 1)).get('to') ?? '';
    if (!req.url.includes('?') || !isDialTarget(to)) {
      intake.refused('plivo', 'malformed');
      throw new BadRequestError('to must be an E.164 number or a sip: address');
    }
    return reply.header('content-type', XML).send(dialXml(to));
  }

  return async function plugin(app: FastifyInstance): Promise<void> {
    // Signatures are over the parameters as received: every body arrives raw and is read as a form,
    // whatever its content type says.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: BODY_LIMIT_BYTES }, (_req, body, done) =>
      done(null, body),
    );
    const options = { bodyLimit: BODY_LIMIT_BYTES };

    app.post(PLIVO_ANSWER_PATH, options, answer);
    app.post(PLIVO_TRANSFER_PATH, options, transfer);

    app.post(PLIVO_HANGUP_PATH, options, hangup);
    app.post(PLIVO_MACHINE_PATH, options, machine);

    app.post(PLIVO_STREAM_STATUS_PATH, options, async (req, reply) => {
      const { params } = await readVerified(ctx, req);
      log.info({ callSid: field(params, 'CallUUID'), event: field(params, 'Event') }, 'plivo stream status');
      return reply.code(200).send();
    });
  };
}
