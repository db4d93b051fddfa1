// Reads the voice webhook's TwiML answer the way the carrier acts on it (docs/protocols/twilio.md):
// `<Connect><Stream url>` with `<Parameter>` children opens a bidirectional media stream; an answer
// without one (a `<Say>` or a `<Play>` of a recording, then `<Hangup/>`, when the server turns the
// call away) declines it.
// A deliberately small reader: attributes and text of a handful of elements, not a general XML parser.

export type TwimlAnswer =
  | { kind: 'stream'; url: string; parameters: Record<string, string> }
  | { kind: 'declined'; say: string; reason: string };

export function readTwimlAnswer(xml: string): TwimlAnswer {
  const played = textOf(xml, 'Play');
  const say = textOf(xml, 'Say') || (played ? `(the recording at ${played})` : '');
  const connect = elementBody(xml, 'Connect');
  const streamTag = connect === undefined ? undefined : openTag(connect, 'Stream');
  if (connect === undefined || streamTag === undefined) {
    const reason = /<Start[\s>]/i.test(xml)
      ? '<Start><Stream> is a one-way stream; a bidirectional one needs <Connect><Stream>'
      : 'the answer has no <Connect><Stream>';
    return { kind: 'declined', say, reason };
  }
  const url = attributes(streamTag).url;
  if (url === undefined || url === '') {
    return { kind: 'declined', say, reason: '<Stream> has no url attribute' };
  }
  // A null prototype keeps a parameter named `__proto__` an ordinary key.
  const parameters: Record<string, string> = Object.create(null);
  const streamBody = elementBody(connect, 'Stream') ?? '';
  for (const match of streamBody.matchAll(/<Parameter\b([^>]*?)\/?>/gi)) {
    const { name, value } = attributes(match[1] ?? '');
    if (name !== undefined) parameters[name] = value ?? '';
  }
  return { kind: 'stream', url, parameters };
}

/** The attribute text of the first `<tag …>` (self-closing or not). */
function openTag(xml: string, tag: string): string | undefined {
  const match = new RegExp(`<${tag}\\b([^>]*?)/?>`, 'i').exec(xml);
  return match?.[1];
}

/** What lies between `<tag …>` and `</tag>`, or '' for `<tag/>`; undefined when the tag is absent. */
function elementBody(xml: string, tag: string): string | undefined {
  const open = new RegExp(`<${tag}\\b[^>]*?(/?)>`, 'i').exec(xml);
  if (open === null) return undefined;
  if (open[1] === '/') return '';
  const start = open.index + open[0].length;
  const close = xml.slice(start).search(new RegExp(`</${tag}\\s*>`, 'i'));
  return close === -1 ? xml.slice(start) : xml.slice(start, start + close);
}

/** All `<Say>` texts, entity-decoded and joined. */
function textOf(xml: string, tag: string): string {
  const texts: string[] = [];
  for (const match of xml.matchAll(new RegExp(`<${tag}\\b[^>]*>([\\s\\S]*?)</${tag}\\s*>`, 'gi'))) {
    texts.push(decodeEntities((match[1] ?? '').replace(/<!\[CDATA\[([\s\S]*?)\]\]>/g, '$1')).trim());
  }
  return texts.filter((t) => t !== '').join(' ');
}

function attributes(text: string): Record<string, string | undefined> {
  const attrs: Record<string, string> = Object.create(null);
  for (const match of text.matchAll(/([A-Za-z_][\w.:-]*)\s*=\s*(?:"([^"]*)"|'([^']*)')/g)) {
    attrs[match[1]!] = decodeEntities(match[2] ?? match[3] ?? '');
  }
  return attrs;
}

const NAMED_ENTITIES: Readonly<Record<string, string>> = Object.freeze({
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
});

export function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, ref: string) => {
    if (ref[0] === '#') {
      const code =
        ref[1] === 'x' || ref[1] === 'X' ? Number.parseInt(ref.slice(2), 16) : Number(ref.slice(1));
      return code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return Object.hasOwn(NAMED_ENTITIES, ref) ? NAMED_ENTITIES[ref]! : whole;
  });
}
