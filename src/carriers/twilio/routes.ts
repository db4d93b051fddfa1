// Twilio's webhooks (docs/protocols/twilio.md): the voice webhook that answers with
// <Connect><Stream> naming the call's media URL, and status callbacks. The media stream itself is
// the call core's, served at /media/twilio….
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { MULAW_8K } from '../../audio/format.js';
import { type CallIntake, OBSERVER_HEADER } from '../../call/carrier-port.js';
import type { Config } from '../../config/types.js';
import { BadRequestError, BadSignatureError } from '../../errors.js';
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

function twiml(reply: FastifyReply, body: string): FastifyReply {
  return reply.header('content-type', 'text/xml; charset=utf-8').send(body);
}

export function twilioRoutes(config: Config, intake: CallIntake) {
  const authToken = config.twilio.authToken;

  /** Signed over the URL exactly as the carrier called it, plus the POST parameters. */
  const verify = (req: FastifyRequest, params: FormParams) => {
    if (!authToken) return;
    const url = `${config.publicUrl}${req.url}`;
    if (!validateTwilioSignature(authToken, req.headers['x-twilio-signature'], url, params)) {
      intake.refused('twilio', 'bad_signature');
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
      verify(req, params);
      const callSid = single(params, 'CallSid');
      if (!SID.test(callSid)) throw new BadRequestError('CallSid is missing or malformed');
      if (intake.admit('twilio') !== 'admitted') {
        // Declined politely, before any agent is dialed: the caller hears why, or goes elsewhere.
        const { message, redirectUrl, audioUrl } = intake.decline;
        if (redirectUrl) return twiml(reply, redirectTwiml(redirectUrl));
        return twiml(reply, audioUrl ? playHangupTwiml(audioUrl) : sayHangupTwiml(message));
      }
      const direction = single(params, 'Direction').startsWith('outbound') ? 'outbound' : 'inbound';
      // Twilio's bidirectional streams carry μ-law 8 kHz only.
      const prepared = intake.prepare({
        carrier: 'twilio',
        callSid,
        from: single(params, 'From'),
        to: single(params, 'To'),
        direction,
        mediaFormat: MULAW_8K,
      });
      // The token is in the stream URL's path, and as a <Parameter> too, which `start` echoes back.
      reply.header(OBSERVER_HEADER, prepared.observerToken);
      return twiml(reply, connectStreamTwiml(prepared.mediaUrl, { token: prepared.token }));
    });

    app.post('/carriers/twilio/status', async (req: FastifyRequest, reply: FastifyReply) => {
      const params = (req.body ?? {}) as FormParams;
      verify(req, params);
      req.log.info(
        { callSid: single(params, 'CallSid'), callStatus: single(params, 'CallStatus') },
        'call status callback',
      );
      return reply.code(204).send();
    });
  };
}
