// Plivo XML answers (docs/protocols/plivo.md section 2): the bidirectional <Stream> that
// connects a call to its media socket, the polite decline, the redirect, and the <Dial> a transfer
// leads to. Every value is escaped.
import { escapeXmlAttribute, escapeXmlText } from '../xml-escape.js';

const XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>';

function response(body: string): string {
  return `${XML_DECLARATION}<Response>${body}</Response>`;
}

export interface PlivoStreamOptions {
  /** The media socket, token in its path: `extraHeaders` allow only [A-Za-z0-9], so it cannot go there. */
  url: string;
  /** `audio/x-mulaw;rate=8000`, `audio/x-l16;rate=8000` or `audio/x-l16;rate=16000`. */
  contentType: string;
  statusCallbackUrl: string;
}

/** Bidirectional, and kept alive: the call stays up while the stream runs, with no verb after it. */
export function streamXml(opts: PlivoStreamOptions): string {
  return response(
    `<Stream bidirectional="true" keepCallAlive="true" contentType="${escapeXmlAttribute(opts.contentType)}" ` +
      `statusCallbackUrl="${escapeXmlAttribute(opts.statusCallbackUrl)}" statusCallbackMethod="POST">` +
      `${escapeXmlText(opts.url)}</Stream>`,
  );
}

/** Declines a call politely: the caller hears the text, then the call ends. */
export function speakHangupXml(text: string): string {
  return response(`<Speak>${escapeXmlText(text)}</Speak><Hangup/>`);
}

/** Declines a call with a recording: the caller hears it, then the call ends. */
export function playHangupXml(audioUrl: string): string {
  return response(`<Play>${escapeXmlText(audioUrl)}</Play><Hangup/>`);
}

export function redirectXml(url: string): string {
  return response(`<Redirect method="POST">${escapeXmlText(url)}</Redirect>`);
}

const E164 = /^\+[1-9]\d{1,14}$/;
const SIP_URI = /^sips?:\S+$/i;

/** Whether `target` is something a transfer may dial: an E.164 number or a `sip:` address. */
export function isDialTarget(target: string): boolean {
  return E164.test(target) || SIP_URI.test(target);
}

/** The transfer target dialled: a number, or a SIP endpoint as Plivo's <User>. */
export function dialXml(target: string): string {
  if (E164.test(target)) return response(`<Dial><Number>${target.slice(1)}</Number></Dial>`);
  if (SIP_URI.test(target)) return response(`<Dial><User>${escapeXmlText(target)}</User></Dial>`);
  throw new Error('plivo xml: dial target must be an E.164 number or a sip: address');
}
