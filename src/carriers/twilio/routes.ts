// Twilio's webhooks (docs/protocols/twilio.md): the voice webhook that answers with
// <Connect><Stream> naming the call's media URL, and status callbacks. The media stream itself is
// the call core's, served at /media/twilio….
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { MULAW_8K } from '../../audio/format.js';
import type { MachineVerdict, VerdictReport } from '../../call/outbound/amd-gate.js';
import {
  type CallIntake,
  OBSERVER_HEADER,
  type OutboundFinalStatus,
  type ResolvedContext,
} from '../../call/carrier-port.js';
import type { Config } from '../../config/types.js';
import { BadRequestError, BadSignatureError } from '../../errors.js';
import { TWILIO_CONTEXT_PARAM } from './placer.js';
import { validateTwilioSignature } from './signature.js';
import { connectStreamTwiml, playHangupTwiml, redirectTwiml, sayHangupTwiml } from './twiml.js';

type FormParams = Record<string, string | string[]>;

const FORM_BODY_LIMIT_BYTES = 64 * 1024;
const SID = /^[A-Za-z0-9]{2,64}$/;

function parseForm(body: string): FormParams {
  const params: FormParams = {};
  for (const [key, value] of new URLSearchParams(body)) {
    const seen = params[key];
    if (seen === undefined) params[key] = value;
    else params[key] = Array.isArray(seen) ? [...seen, value] : [seen, value];
  }
  return params;
}

function single(params: FormParams, key: string): string {
  const value = params[key];
  return typeof value === 'string' ? value : '';
}

/** Twilio's final call statuses in the common words; the others (ringing, answered) are progress. */
const FINAL_STATUSES: Readonly<Record<string, OutboundFinalStatus>> = Object.freeze({
  completed: 'completed',
  busy: 'busy',
  'no-answer': 'no_answer',
  failed: 'failed',
  canceled: 'canceled',
});

/** Twilio's `AnsweredBy` (docs/protocols/answering-machine-detection.md) in the common words. */
export function twilioVerdict(answeredBy: string, durationMs: string): VerdictReport | null {
  let verdict: MachineVerdict;
  let messageEnded = false;
  switch (answeredBy) {
    case 'human':
      verdict = 'human';
      break;
    case 'unknown':
      verdict = 'unknown';
      break;
    case 'fax':
      verdict = 'fax';
      break;
    case 'machine_start':
      verdict = 'machine';
      break;
    case 'machine_end_beep':
    case 'machine_end_silence':
    case 'machine_end_other':
      verdict = 'machine';
      messageEnded = true;
      break;
    default:
      return null;
  }
  const ms = Number(durationMs);
  return {
    verdict,
    messageEnded,
    detectionMs: durationMs !== '' && Number.isFinite(ms) && ms >= 0 ? ms : null,
    raw: answeredBy,
  };
}

/** A reason word off the wire, bounded for the record and logs. */
function reasonOf(params: FormParams): string | null {
  const sip = single(params, 'SipResponseCode');
  const error = single(params, 'ErrorCode');
  if (/^\d{3}$/.test(sip)) return `SIP ${sip}`;
  if (/^\d{1,6}$/.test(error)) return `Twilio error ${error}`;
  return null;
}

function twiml(reply: FastifyReply, body: string): FastifyReply {
  return reply.header('content-type', 'text/xml; charset=utf-8').send(body);
}

export function twilioRoutes(
  config: Config,
  intake: CallIntake,
  opts: { simulationAuthToken?: string | null } = {},
) {
  /**
   * Signed over the URL exactly as the carrier called it, plus the POST parameters. Returns whether
   * the request was verified: with no auth token (outside production) only the simulated carrier's
   * signed requests are; an unsigned one is unverified.
   */
  const verify = (req: FastifyRequest, params: FormParams): boolean => {
    const signed = req.headers['x-twilio-signature'] !== undefined;
    const authToken = config.twilio.authToken ?? (signed ? (opts.simulationAuthToken ?? null) : null);
    if (!authToken) return false;
    const url = `${config.publicUrl}${req.url}`;
    if (!validateTwilioSignature(authToken, req.headers['x-twilio-signature'], url, params)) {
      intake.refused('twilio', 'bad_signature');
      throw new BadSignatureError('X-Twilio-Signature does not match this request');
    }
    return true;
  };

  /** The outbound context in the URL Twilio was given, or undefined for a call we did not place. */
  const contextOf = async (req: FastifyRequest, verified: boolean): Promise<ResolvedContext | undefined> => {
    const ref = (req.query as Record<string, unknown> | undefined)?.[TWILIO_CONTEXT_PARAM];
    if (ref === undefined) return undefined;
    const resolved = await intake.outboundContext('twilio', ref, verified);
    if (resolved === null) {
      intake.refused('twilio', 'bad_context');
      throw new BadRequestError('the call context in this URL is not valid');
    }
    return resolved;
  };

  return async function plugin(app: FastifyInstance): Promise<void> {
    app.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT_BYTES },
      (_req, body, done) => done(null, parseForm(body as string)),
    );

    app.post('/carriers/twilio/voice', async (req: FastifyRequest, reply: FastifyReply) => {
      const params = (req.body ?? {}) as FormParams;
      const verified = verify(req, params);
      const callSid = single(params, 'CallSid');
      if (!SID.test(callSid)) throw new BadRequestError('CallSid is missing or malformed');
      if (intake.admit('twilio') !== 'admitted') {
        // Declined politely, before any agent is dialed: the caller hears why, or goes elsewhere.
        const { message, redirectUrl, audioUrl } = intake.decline;
        if (redirectUrl) return twiml(reply, redirectTwiml(redirectUrl));
        return twiml(reply, audioUrl ? playHangupTwiml(audioUrl) : sayHangupTwiml(message));
      }
      const outbound = await contextOf(req, verified);
      const direction =
        outbound || single(params, 'Direction').startsWith('outbound') ? 'outbound' : 'inbound';
      // Twilio's bidirectional streams carry μ-law 8 kHz only.
      const prepared = await intake.prepareOnce({
        carrier: 'twilio',
        callSid,
        from: single(params, 'From'),
        to: single(params, 'To'),
        direction,
        mediaFormat: MULAW_8K,
        ...(outbound ? { context: outbound } : {}),
        verified,
      });
      // The token is in the stream URL's path, and as a <Parameter> too, which `start` echoes back.
      if (prepared.observerToken !== null) reply.header(OBSERVER_HEADER, prepared.observerToken);
      return twiml(reply, connectStreamTwiml(prepared.mediaUrl, { token: prepared.token }));
    });

    app.post('/carriers/twilio/status', async (req: FastifyRequest, reply: FastifyReply) => {
      const params = (req.body ?? {}) as FormParams;
      const verified = verify(req, params);
      const callSid = single(params, 'CallSid');
      const callStatus = single(params, 'CallStatus');
      if (!SID.test(callSid)) throw new BadRequestError('CallSid is missing or malformed');
      req.log.info({ callSid, callStatus: callStatus.slice(0, 32) }, 'call status callback');
      const outbound = await contextOf(req, verified);
      const status = Object.hasOwn(FINAL_STATUSES, callStatus) ? FINAL_STATUSES[callStatus] : undefined;
      if (outbound && status) {
        const seconds = Number(single(params, 'CallDuration'));
        intake.outboundStatus({
          carrier: 'twilio',
          callSid,
          from: single(params, 'From').slice(0, 64),
          to: single(params, 'To').slice(0, 64),
          context: outbound.context,
          status,
          reason: reasonOf(params),
          durationMs: Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : null,
        });
      }
      return reply.code(204).send();
    });

    // Asynchronous answering-machine detection's verdict (AsyncAmdStatusCallback).
    app.post('/carriers/twilio/amd', async (req: FastifyRequest, reply: FastifyReply) => {
      const params = (req.body ?? {}) as FormParams;
      const verified = verify(req, params);
      const callSid = single(params, 'CallSid');
      if (!SID.test(callSid)) throw new BadRequestError('CallSid is missing or malformed');
      const report = twilioVerdict(single(params, 'AnsweredBy'), single(params, 'MachineDetectionDuration'));
      if (report === null) throw new BadRequestError('AnsweredBy is missing or not a verdict Twilio gives');
      await contextOf(req, verified);
      intake.machineVerdict('twilio', callSid, report);
      return reply.code(204).send();
    });
  };
}
