// TwiML answers for Twilio voice webhooks and call updates (docs/protocols/twilio.md).
import { escapeXmlAttribute, escapeXmlText } from '../xml-escape.js';

const XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>';

function response(body: string): string {
  return `${XML_DECLARATION}<Response>${body}</Response>`;
}

/**
 * Bidirectional stream (`<Connect>`, never the one-way `<Start>`). Per-call data travels as
 * `<Parameter>`s because Twilio refuses a query string on the stream URL.
 */
export function connectStreamTwiml(streamUrl: string, params: Record<string, string>): string {
  if (streamUrl.includes('?')) throw new Error('twiml: stream URL may not carry a query string');
  let parameters = '';
  for (const [name, value] of Object.entries(params)) {
    parameters += `<Parameter name="${escapeXmlAttribute(name)}" value="${escapeXmlAttribute(value)}"/>`;
  }
  return response(`<Connect><Stream url="${escapeXmlAttribute(streamUrl)}">${parameters}</Stream></Connect>`);
}

/** Declines a call politely: the caller hears the text, then the call ends. */
export function sayHangupTwiml(text: string): string {
  return response(`<Say>${escapeXmlText(text)}</Say><Hangup/>`);
}

/** Declines a call with a recording: the caller hears it, then the call ends. */
export function playHangupTwiml(audioUrl: string): string {
  return response(`<Play>${escapeXmlText(audioUrl)}</Play><Hangup/>`);
}

const E164 = /^\+[1-9]\d{1,14}$/;
const SIP_URI = /^sips?:/i;

/** Transfer target: an E.164 number or a `sip:`/`sips:` URI; anything else is a caller bug. */
export function dialTwiml(target: string): string {
  if (E164.test(target)) return response(`<Dial><Number>${target}</Number></Dial>`);
  if (SIP_URI.test(target)) return response(`<Dial><Sip>${escapeXmlText(target)}</Sip></Dial>`);
  throw new Error('twiml: dial target must be an E.164 number or a sip: URI');
}

export function redirectTwiml(url: string): string {
  return response(`<Redirect>${escapeXmlText(url)}</Redirect>`);
}
