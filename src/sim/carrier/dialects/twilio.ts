// The simulated carrier playing Twilio (docs/protocols/twilio.md): the voice webhook posted
// form-encoded and signed with X-Twilio-Signature when TWILIO_AUTH_TOKEN is in the environment,
// the TwiML answer read as Twilio acts on it, then the media stream it names, its upgrade signed too.
import { randomBytes } from 'node:crypto';
import { computeTwilioSignature } from '../../../carriers/twilio/signature.js';
import type { SimAnswer, SimCallSpec, SimDialect } from '../dialect.js';
import { sendWebhook } from '../voice-webhook.js';
import { twilioSimStream } from './twilio-stream.js';
import { readTwimlAnswer } from '../twiml.js';

/** Twilio sids: a two-letter type prefix and 32 hex digits. */
export function twilioSid(prefix: 'CA' | 'AC' | 'MZ'): string {
  return prefix + randomBytes(16).toString('hex');
}

// Twilio answers only XML; other content types fail the call on a real number (error 12300).
const XML_CONTENT_TYPE = /^(text|application)\/xml\b/i;

/** Twilio connects only to WebSocket URLs and does not pass a query string on (use <Parameter>). */
function checkStreamUrl(raw: string, warnings: string[]): string | Error {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return new Error(`<Stream url="${raw}"> is not an absolute URL`);
  }
  if (url.protocol !== 'wss:' && url.protocol !== 'ws:') {
    return new Error(`<Stream url="${raw}"> must be a wss:// (or ws://) URL`);
  }
  if (url.search !== '') {
    warnings.push(
      '<Stream url> carries a query string, which Twilio drops; pass per-call data as <Parameter>',
    );
    return raw.slice(0, raw.indexOf('?'));
  }
  return raw;
}

async function announce(call: SimCallSpec): Promise<SimAnswer> {
  const authToken = call.env.TWILIO_AUTH_TOKEN || undefined;
  const accountSid = call.outbound?.accountSid ?? (call.env.TWILIO_ACCOUNT_SID || twilioSid('AC'));
  const callSid = call.outbound?.callSid ?? twilioSid('CA');
  // A call the server placed fetches the URL the server gave when it created the call.
  const url = call.outbound?.answerUrl ?? `${call.server}/carriers/twilio/voice`;
  const params: Record<string, string> = {
    CallSid: callSid,
    AccountSid: accountSid,
    From: call.from,
    To: call.to,
    Caller: call.from,
    Called: call.to,
    CallStatus: call.outbound ? 'in-progress' : 'ringing',
    Direction: call.outbound ? 'outbound-api' : 'inbound',
    ApiVersion: '2010-04-01',
  };
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded',
    accept: '*/*',
    'user-agent': 'TwilioProxy/1.1',
  };
  if (authToken !== undefined) headers['x-twilio-signature'] = computeTwilioSignature(authToken, url, params);
  const answer = await sendWebhook(
    {
      url,
      headers,
      body: new URLSearchParams(params).toString(),
      timeoutMs: call.timeoutMs,
      ...(call.signal ? { signal: call.signal } : {}),
    },
    'voice webhook',
  );
  if (!answer.ok) return { kind: 'failed', error: answer.error };
  const warnings: string[] = [];
  if (!XML_CONTENT_TYPE.test(answer.contentType)) {
    warnings.push(`voice webhook answered content-type "${answer.contentType}"; Twilio expects text/xml`);
  }
  const twiml = readTwimlAnswer(answer.body);
  if (twiml.kind === 'declined') return { kind: 'declined', reason: twiml.reason, say: twiml.say };
  const streamUrl = checkStreamUrl(twiml.url, warnings);
  if (streamUrl instanceof Error)
    return { kind: 'failed', error: `the answer names no usable stream: ${streamUrl.message}` };
  const streamHeaders: Record<string, string> = { 'user-agent': 'Twilio.TmeWs/1.0' };
  // The upgrade is signed over the wss:// URL with no parameters.
  if (authToken !== undefined) {
    streamHeaders['x-twilio-signature'] = computeTwilioSignature(authToken, streamUrl, {});
  }
  return {
    kind: 'stream',
    stream: twilioSimStream({
      url: streamUrl,
      headers: streamHeaders,
      accountSid,
      callSid,
      streamSid: twilioSid('MZ'),
      customParameters: twiml.parameters,
    }),
    ...(answer.observerToken === undefined ? {} : { observerToken: answer.observerToken }),
    warnings,
  };
}

export const twilioDialect: SimDialect = {
  name: 'twilio',
  describeSigning: (env) => (env.TWILIO_AUTH_TOKEN ? 'signed' : 'unsigned: TWILIO_AUTH_TOKEN not set'),
  announce,
};
