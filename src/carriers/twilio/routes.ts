// Twilio's HTTP and WebSocket surface: the voice webhook that answers with <Connect><Stream>,
// status callbacks, and the bidirectional media stream (PROTOCOLS.md section 2).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { buildSettings } from '../../agent/settings.js';
import { observerToken } from '../../call/observer.js';
import { issueStreamToken } from '../../call/stream-token.js';
import { BadRequestError, BadSignatureError } from '../../errors.js';
import type { CarrierControl } from '../carrier.js';
import { handleMediaSocket, type MediaDeps, PREWARM_FORMAT } from '../media.js';
import { createTwilioStream } from './protocol.js';
import { createTwilioRest } from './rest.js';
import { validateTwilioSignature } from './signature.js';
import { connectStreamTwiml, redirectTwiml, sayHangupTwiml } from './twiml.js';

type FormParams = Record<string, string | string[]>;

const FORM_BODY_LIMIT_BYTES = 64 * 1024;
const REST_TIMEOUT_MS = 5_000;
const DECLINED_MESSAGE = "Sorry, we can't take your call right now. Please call back in a few minutes.";
const SID = /^[A-Za-z0-9]{2,64}$/;

/** The stream URL the carrier dials: the public base with its scheme turned into ws/wss. */
export function mediaUrl(publicUrl: string, carrier: string): string {
  return `${publicUrl.replace(/^http/, 'ws')}/media/${carrier}`;
}

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

export function twilioRoutes(deps: MediaDeps) {
  const { config } = deps;
  const authToken = config.twilio.authToken;
  const { accountSid } = config.twilio;
  // PROTOCOLS.md section 2, REST: hang up with Status=completed, transfer with <Dial> TwiML.
  const rest =
    accountSid && authToken
      ? createTwilioRest({ apiUrl: config.twilio.apiUrl, accountSid, authToken, timeoutMs: REST_TIMEOUT_MS })
      : null;
  const control: CarrierControl | null = rest && {
    hangup: (callSid) => rest.hangup(callSid),
    transfer: (callSid, target) => rest.transfer(callSid, target),
  };

  /** Dials the agent while Twilio is still opening the media stream (call control: pre-warming). */
  const prewarm = (callSid: string, profileName: string, req: FastifyRequest) => {
    const profile = config.profiles[profileName];
    if (!config.agent.prewarm || !profile) return;
    const settings = buildSettings(profile, { callSid, streamSid: '', carrier: 'twilio' }, PREWARM_FORMAT);
    const ready = deps.dial(settings, deps.logger.child({ callSid })).catch((err: Error) => {
      deps.metrics.prewarm.inc({ outcome: 'failed' });
      req.log.warn({ err: err.message, callSid }, 'pre-warming the agent failed; the stream will dial again');
      return null;
    });
    deps.prewarm.put(
      callSid,
      { ready, close: () => void ready.then((session) => session?.close()) },
      config.agent.prewarmTtlMs,
    );
  };

  /** PROTOCOLS.md section 2: signed over the URL exactly as the carrier called it, plus POST params. */
  const verify = (req: FastifyRequest, url: string, params: FormParams) => {
    if (!authToken) return;
    const header = req.headers['x-twilio-signature'];
    if (typeof header !== 'string' || !validateTwilioSignature(authToken, header, url, params)) {
      deps.metrics.carrierRequestsRejected.inc({ carrier: 'twilio', reason: 'bad_signature' });
      throw new BadSignatureError('X-Twilio-Signature does not match this request');
    }
  };

  return async function plugin(app: FastifyInstance): Promise<void> {
    app.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT_BYTES },
      (_req, body, done) => done(null, parseForm(body as string)),
    );

    app.post('/carriers/twilio/voice', async (req: FastifyRequest, reply: FastifyReply) => {
      const params = (req.body ?? {}) as FormParams;
      verify(req, `${config.publicUrl}${req.url}`, params);
      const callSid = single(params, 'CallSid');
      if (!SID.test(callSid)) throw new BadRequestError('CallSid is missing or malformed');
      const admission = deps.admitCall();
      if (admission !== 'admitted') {
        // Declined politely, before any agent is dialed: the caller hears why, or goes elsewhere.
        deps.metrics.callsDeclined.inc({ carrier: 'twilio', reason: admission });
        req.log.warn({ callSid, reason: admission }, 'call declined');
        const twiml = config.declineRedirectUrl
          ? redirectTwiml(config.declineRedirectUrl)
          : sayHangupTwiml(DECLINED_MESSAGE);
        return reply.header('content-type', 'text/xml; charset=utf-8').send(twiml);
      }
      const to = single(params, 'To');
      const from = single(params, 'From');
      const profile = config.numbers.routes[to] ?? config.numbers.default;
      const direction = single(params, 'Direction').startsWith('outbound') ? 'outbound' : 'inbound';
      const token = issueStreamToken(
        config.streamTokenSecret,
        { callSid, profile, from, to, direction },
        config.streamTokenTtlMs,
      );
      prewarm(callSid, profile, req);
      req.log.info({ callSid, profile, direction }, 'voice webhook answered');
      return reply
        .header('content-type', 'text/xml; charset=utf-8')
        .header('x-callbridge-observer', observerToken(config.streamTokenSecret, callSid))
        .send(connectStreamTwiml(mediaUrl(config.publicUrl, 'twilio'), { token }));
    });

    app.post('/carriers/twilio/status', async (req: FastifyRequest, reply: FastifyReply) => {
      const params = (req.body ?? {}) as FormParams;
      verify(req, `${config.publicUrl}${req.url}`, params);
      req.log.info(
        { callSid: single(params, 'CallSid'), callStatus: single(params, 'CallStatus') },
        'call status callback',
      );
      return reply.code(204).send();
    });

    app.get(
      '/media/twilio',
      {
        websocket: true,
        // The upgrade request is signed over the wss:// URL with no params.
        preValidation: async (req) => verify(req, mediaUrl(config.publicUrl, 'twilio'), {}),
      },
      (socket) =>
        handleMediaSocket(socket, { name: 'twilio', createStream: createTwilioStream, control }, deps),
    );
  };
}
