// Reads the answer URL's XML the way Plivo acts on it (docs/protocols/plivo.md section 2): a
// <Stream> opens the media stream its text names; <Speak> (or <Play> of a recording) then <Hangup/>
// declines; <Redirect> sends the call elsewhere. A deliberately small reader for these elements, not a general XML parser.
import { decodeEntities } from '../twiml.js';

export type PlivoXmlAnswer =
  | { kind: 'stream'; url: string; attributes: Record<string, string> }
  | { kind: 'declined'; say: string; reason: string };

function attributes(text: string): Record<string, string> {
  const attrs: Record<string, string> = Object.create(null);
  for (const match of text.matchAll(/([A-Za-z_][\w.:-]*)\s*=\s*(?:"([^"]*)"|'([^']*)')/g)) {
    attrs[match[1]!] = decodeEntities(match[2] ?? match[3] ?? '');
  }
  return attrs;
}

export function readPlivoXml(xml: string): PlivoXmlAnswer {
  const says = [...xml.matchAll(/<Speak\b[^>]*>([\s\S]*?)<\/Speak\s*>/gi)].map((m) =>
    decodeEntities(m[1] ?? '').trim(),
  );
  const played = /<Play\b[^>]*>([\s\S]*?)<\/Play\s*>/i.exec(xml);
  const said = says.filter((text) => text !== '').join(' ');
  const say = said || (played ? `(the recording at ${decodeEntities(played[1] ?? '').trim()})` : '');
  const stream = /<Stream\b([^>]*)>([\s\S]*?)<\/Stream\s*>/i.exec(xml);
  if (stream !== null) {
    return {
      kind: 'stream',
      url: decodeEntities(stream[2] ?? '').trim(),
      attributes: attributes(stream[1] ?? ''),
    };
  }
  const redirect = /<Redirect\b[^>]*>([\s\S]*?)<\/Redirect\s*>/i.exec(xml);
  if (redirect !== null) {
    return { kind: 'declined', say, reason: `redirected to ${decodeEntities(redirect[1] ?? '').trim()}` };
  }
  return { kind: 'declined', say, reason: /<Hangup\b/i.test(xml) ? 'hung up' : 'the answer has no <Stream>' };
}

/** `audio/x-mulaw;rate=8000` → its parts, or undefined for anything Plivo does not stream. */
export function readPlivoContentType(
  value: string,
): { encoding: 'mulaw' | 'linear16'; sampleRate: number } | undefined {
  const match = /^audio\/x-(mulaw|l16);\s*rate=(8000|16000)$/i.exec(value.trim());
  if (match === null) return undefined;
  const encoding = match[1]!.toLowerCase() === 'mulaw' ? 'mulaw' : 'linear16';
  const sampleRate = Number(match[2]);
  // μ-law is offered at 8 kHz only.
  if (encoding === 'mulaw' && sampleRate !== 8000) return undefined;
  return { encoding, sampleRate };
}
