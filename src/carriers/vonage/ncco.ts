// NCCOs (Vonage's call control objects, docs/protocols/vonage.md) callbridge answers with or
// transfers to: connect the call to our media WebSocket, speak a decline, or dial a person.

export type Ncco = Array<Record<string, unknown>>;

/** Linear PCM at 16 kHz: one of the formats the agent takes as is, so nothing is transcoded. */
export const VONAGE_CONTENT_TYPE = 'audio/l16;rate=16000';

/** The answer that streams the call to `uri`; `headers` come back in `websocket:connected`. */
export function connectWebsocketNcco(uri: string, headers: Record<string, string>): Ncco {
  return [
    {
      action: 'connect',
      endpoint: [{ type: 'websocket', uri, 'content-type': VONAGE_CONTENT_TYPE, headers }],
    },
  ];
}

/** Declines a call politely: the caller hears the text, and the call ends with the NCCO. */
export function sayHangupNcco(text: string): Ncco {
  return [{ action: 'talk', text }];
}

/** Declines a call with a recording: the caller hears it, and the call ends with the NCCO. */
export function streamHangupNcco(audioUrl: string): Ncco {
  return [{ action: 'stream', streamUrl: [audioUrl] }];
}

const E164 = /^\+[1-9]\d{1,14}$/;
const SIP_URI = /^sips?:[^\s"<>]{1,256}$/i;

/** Transfer target: an E.164 number or a `sip:`/`sips:` URI; anything else is a caller bug. */
export function transferNcco(target: string): Ncco {
  // Vonage writes phone numbers as E.164 digits without the plus.
  if (E164.test(target))
    return [{ action: 'connect', endpoint: [{ type: 'phone', number: target.slice(1) }] }];
  if (SIP_URI.test(target)) return [{ action: 'connect', endpoint: [{ type: 'sip', uri: target }] }];
  throw new Error('vonage: transfer target must be an E.164 number or a sip: URI');
}
