// Small readers shared by the carriers' JSON codecs. Every reader is strict about types and bounds
// what it accepts; none of them puts frame content into an error.
import { CarrierFrameError } from '../errors.js';

export type JsonObject = Record<string, unknown>;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Strict base64: standard alphabet, padded, canonical. Decoding and re-encoding is faster on Node 20
 * than a JS character loop, and accepts exactly the canonical encodings.
 */
export function decodeBase64Strict(text: string): Buffer | undefined {
  const bytes = Buffer.from(text, 'base64');
  return bytes.toString('base64') === text ? bytes : undefined;
}

/** The 6-bit value of a character of the standard base64 alphabet. */
function sextet(code: number): number {
  if (code >= 97) return code - 71; // a-z
  if (code >= 65) return code - 65; // A-Z
  if (code >= 48) return code + 4; // 0-9
  return code === 43 ? 62 : 63; // + or /
}

/**
 * Strict base64 of a text a media fast path has already matched to `[^"\\]*` (a JSON string's
 * content with no escape): what is left to check is the alphabet, the length and the bits a padded
 * last group leaves over, with no second encoding (this runs on every caller frame). Node's decoder
 * skips what is outside both base64 alphabets (control characters included) and stops at padding,
 * so any such text decodes short of its length's bytes; the URL-safe `-` and `_`, which it reads,
 * are refused first. Accepts exactly what `decodeBase64Strict` accepts for such a text.
 */
export function decodeMatchedBase64(text: string): Buffer | undefined {
  const length = text.length;
  if (length % 4 !== 0 || text.includes('-') || text.includes('_')) return undefined;
  let pads = 0;
  if (length > 0 && text.charCodeAt(length - 1) === 61) {
    pads = text.charCodeAt(length - 2) === 61 ? 2 : 1;
    const last = sextet(text.charCodeAt(length - pads - 1));
    if ((last & (pads === 2 ? 0x0f : 0x03)) !== 0) return undefined;
  }
  const bytes = Buffer.from(text, 'base64');
  return bytes.length === (length / 4) * 3 - pads ? bytes : undefined;
}

export const DTMF_DIGITS: ReadonlySet<string> = new Set([
  '0',
  '1',
  '2',
  '3',
  '4',
  '5',
  '6',
  '7',
  '8',
  '9',
  '*',
  '#',
  'A',
  'B',
  'C',
  'D',
]);

/** Printable ASCII with no spaces or quotes, 1 to 256 characters: what carrier ids look like. */
const CARRIER_ID = /^[\x21\x23-\x26\x28-\x7e]{1,256}$/;

export function isCarrierId(value: unknown): value is string {
  return typeof value === 'string' && CARRIER_ID.test(value);
}

/**
 * A non-negative integer sent as a number or as a decimal string (carriers do both), at most 15
 * digits; undefined when it is neither.
 */
export function readCount(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
  if (typeof value === 'string' && /^\d{1,15}$/.test(value)) return Number(value);
  return undefined;
}

/** String entries of an object or of a `[{name, value}]` list, bounded in count and size. */
export function readParameters(
  raw: unknown,
  limits = { maxEntries: 32, maxKeyChars: 128, maxValueChars: 4096 },
): Record<string, string> | undefined {
  // A null prototype keeps a `__proto__` parameter an ordinary key.
  const params: Record<string, string> = Object.create(null);
  let entries: Array<[unknown, unknown]>;
  if (Array.isArray(raw)) {
    entries = raw.map((item) => (isObject(item) ? [item.name, item.value] : [undefined, undefined]));
  } else if (isObject(raw)) {
    entries = Object.entries(raw);
  } else {
    return undefined;
  }
  let count = 0;
  for (const [key, value] of entries) {
    if (count >= limits.maxEntries) break;
    if (typeof key !== 'string' || typeof value !== 'string') continue;
    if (key === '' || key.length > limits.maxKeyChars || value.length > limits.maxValueChars) continue;
    params[key] = value;
    count += 1;
  }
  return params;
}

/** A mark (checkpoint) name: a non-empty string of at most 256 characters. */
export function isMarkName(value: unknown): value is string {
  return typeof value === 'string' && value !== '' && value.length <= 256;
}

/** A copy of 16-bit samples with each pair of bytes swapped (big-endian ⇄ little-endian). */
export function swapBytePairs(bytes: Buffer): Buffer {
  const even = bytes.length & ~1;
  const copy = Buffer.allocUnsafe(even);
  bytes.copy(copy, 0, 0, even);
  return copy.swap16();
}

/** An unknown event's name as it may be logged and counted: short and plain, else `unknown`. */
export function eventName(event: string): string {
  return /^[A-Za-z0-9_.:-]{1,32}$/.test(event) ? event : 'unknown';
}

/**
 * One carrier's frame readers: each failure is a CarrierFrameError whose message starts with the
 * carrier's name and names the event and field, never the frame's content.
 */
export interface FrameReader {
  fail(message: string): never;
  /** A JSON object frame and its `event` name. */
  jsonEvent(text: string): { frame: JsonObject; event: string };
  objectField(frame: JsonObject, key: string, event: string): JsonObject;
  /** A string field, at most `maxChars` long when given. */
  stringField(obj: JsonObject, key: string, event: string, maxChars?: number): string;
  /** A base64 media payload, strictly decoded. */
  payload(base64: string, event?: string): Buffer;
  /** The same, for a payload a fast path matched to the base64 alphabet (decodeMatchedBase64). */
  matchedPayload(base64: string): Buffer;
}

export function frameReader(carrier: string): FrameReader {
  const fail = (message: string): never => {
    throw new CarrierFrameError(`${carrier} ${message}`);
  };
  return {
    fail,
    jsonEvent(text) {
      let frame: unknown;
      try {
        frame = JSON.parse(text);
      } catch {
        fail('frame: invalid JSON');
      }
      if (!isObject(frame)) return fail('frame: not a JSON object');
      const event = frame.event;
      if (typeof event !== 'string') return fail('frame: event must be a string');
      return { frame, event };
    },
    objectField(frame, key, event) {
      const value = frame[key];
      if (!isObject(value)) return fail(`${event}: ${key} must be an object`);
      return value;
    },
    stringField(obj, key, event, maxChars) {
      const value = obj[key];
      if (typeof value !== 'string') return fail(`${event}: ${key} must be a string`);
      if (maxChars !== undefined && value.length > maxChars)
        fail(`${event}: ${key} is longer than ${maxChars} characters`);
      return value;
    },
    payload(base64, event = 'media') {
      const bytes = decodeBase64Strict(base64);
      if (bytes === undefined) return fail(`${event}: payload is not valid base64`);
      return bytes;
    },
    matchedPayload(base64) {
      const bytes = decodeMatchedBase64(base64);
      if (bytes === undefined) return fail('media: payload is not valid base64');
      return bytes;
    },
  };
}
