// Frames for fuzzing a Twilio media socket (docs/protocols/twilio.md section 3): valid ones, random junk, and
// mutated copies of every event Twilio sends. Every choice comes from the seeded Rng.
import type { Rng } from './prng.js';

export interface Frame {
  data: string | Buffer;
  binary: boolean;
  /**
   * Invalid whatever the stream's state: binary, not JSON, not a JSON object, or no string `event`.
   * The server must count each such frame it reads in `callbridge_carrier_frames_invalid_total`.
   */
  certainlyInvalid: boolean;
  bytes: number;
}

/** The server's `maxPayload` for media sockets is 64 KiB; a few frames go past it on purpose. */
export const OVER_MAX_PAYLOAD = 64 * 1024 + 1;
const BIG_MIN = 16 * 1024;
const BIG_MAX = 60 * 1024;
/** Audio bytes whose base64 media frame still fits under `maxPayload`. */
const BULK_MEDIA_MAX = 46 * 1024;

/** Stands for a deeply nested value until the frame is serialized. */
const DEEP = 'deep-nesting-marker-7f3a';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export interface StreamIds {
  callSid: string;
  streamSid: string;
}

function text(data: string): Frame {
  let certainlyInvalid = true;
  try {
    const parsed: unknown = JSON.parse(data);
    certainlyInvalid =
      typeof parsed !== 'object' ||
      parsed === null ||
      Array.isArray(parsed) ||
      typeof (parsed as { event?: unknown }).event !== 'string';
  } catch {
    // Not JSON: invalid.
  }
  return { data, binary: false, certainlyInvalid, bytes: Buffer.byteLength(data) };
}

function binary(data: Buffer): Frame {
  return { data, binary: true, certainlyInvalid: true, bytes: data.length };
}

export class FrameFactory {
  private seq = 0;
  /** Random material made once and sliced: generating hundreds of megabytes byte by byte is slow. */
  private readonly pool: Buffer;
  private readonly base64Pool: string;

  constructor(private readonly rng: Rng) {
    this.pool = rng.bytes(256 * 1024);
    this.base64Pool = this.pool.toString('base64');
  }

  private slice(length: number): Buffer {
    const at = this.rng.int(0, this.pool.length - length);
    return this.pool.subarray(at, at + length);
  }

  /** Strict base64 of `bytes` random bytes. */
  private base64(bytes: number): string {
    return this.slice(bytes).toString('base64');
  }

  private sequence(): string {
    this.seq += 1;
    return String(this.seq);
  }

  // ── valid Twilio frames ────────────────────────────────────────────────────

  connected(): Frame {
    return text(JSON.stringify({ event: 'connected', protocol: 'Call', version: '1.0.0' }));
  }

  startObject(ids: StreamIds, customParameters: Record<string, string>): { [key: string]: Json } {
    return {
      event: 'start',
      sequenceNumber: this.sequence(),
      streamSid: ids.streamSid,
      start: {
        accountSid: `AC${'0'.repeat(32)}`,
        streamSid: ids.streamSid,
        callSid: ids.callSid,
        tracks: ['inbound'],
        mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
        customParameters,
      },
    };
  }

  start(ids: StreamIds, customParameters: Record<string, string>): Frame {
    return text(JSON.stringify(this.startObject(ids, customParameters)));
  }

  mediaObject(ids: StreamIds, payloadBytes = 160): { [key: string]: Json } {
    const seq = this.sequence();
    return {
      event: 'media',
      sequenceNumber: seq,
      streamSid: ids.streamSid,
      media: {
        track: 'inbound',
        chunk: seq,
        timestamp: String(Number(seq) * 20),
        payload: this.base64(payloadBytes),
      },
    };
  }

  media(ids: StreamIds): Frame {
    // Mostly phone-sized frames; some odd-sized and some large (still valid) ones.
    const size = this.rng.chance(0.7)
      ? 160
      : this.rng.chance(0.5)
        ? this.rng.int(1, 999)
        : this.rng.int(BIG_MIN, 40 * 1024);
    return text(JSON.stringify(this.mediaObject(ids, size)));
  }

  markObject(ids: StreamIds): { [key: string]: Json } {
    return {
      event: 'mark',
      sequenceNumber: this.sequence(),
      streamSid: ids.streamSid,
      mark: { name: `m-${this.seq}` },
    };
  }

  dtmfObject(ids: StreamIds): { [key: string]: Json } {
    const digit = this.rng.pick(['0', '1', '5', '9', '*', '#', 'A', 'D']);
    return {
      event: 'dtmf',
      sequenceNumber: this.sequence(),
      streamSid: ids.streamSid,
      dtmf: { track: 'inbound_track', digit },
    };
  }

  stopObject(ids: StreamIds): { [key: string]: Json } {
    return {
      event: 'stop',
      sequenceNumber: this.sequence(),
      streamSid: ids.streamSid,
      stop: { accountSid: `AC${'0'.repeat(32)}`, callSid: ids.callSid },
    };
  }

  valid(ids: StreamIds): Frame {
    const pick = this.rng.int(0, 9);
    if (pick < 6) return this.media(ids);
    if (pick < 8) return text(JSON.stringify(this.markObject(ids)));
    if (pick < 9) return text(JSON.stringify(this.dtmfObject(ids)));
    return this.connected();
  }

  /** Large frames, valid media or junk, just under `maxPayload`: the storm's volume. */
  bulk(ids: StreamIds): Frame {
    if (this.rng.chance(0.6))
      return text(JSON.stringify(this.mediaObject(ids, this.rng.int(BIG_MIN, BULK_MEDIA_MAX))));
    return this.rng.chance(0.5)
      ? binary(this.slice(this.rng.int(BIG_MIN, BIG_MAX)))
      : text(this.base64Pool.slice(0, this.rng.int(BIG_MIN, BIG_MAX)));
  }

  stop(ids: StreamIds): Frame {
    return text(JSON.stringify(this.stopObject(ids)));
  }

  // ── junk ───────────────────────────────────────────────────────────────────

  /**
   * Random bytes, random text, JSON that is not an event object, empty frames, big frames.
   * `keepOpen` leaves out text that is not UTF-8, on which `ws` closes the socket.
   */
  junk(keepOpen = false): Frame {
    const rng = this.rng;
    const kind = rng.int(0, 9);
    switch (keepOpen && kind === 6 ? 0 : kind) {
      case 0:
        return binary(this.slice(rng.int(0, 2048)));
      case 1:
        return binary(this.slice(rng.int(BIG_MIN, BIG_MAX)));
      case 2:
        return text(this.randomString(rng.int(0, 512)));
      case 3:
        return text(this.base64Pool.slice(0, rng.int(BIG_MIN, BIG_MAX)));
      case 4:
        return text(
          rng.pick([
            '',
            ' ',
            '[]',
            '{}',
            'null',
            '0',
            '-1e309',
            '"media"',
            'true',
            '{"event":1}',
            '{"event":null}',
          ]),
        );
      case 5:
        return text(`${'['.repeat(rng.int(1, 30_000))}${']'.repeat(rng.int(0, 30_000))}`);
      case 6: {
        // Text frames that are not UTF-8: `ws` closes the socket (1007) before the server reads them.
        const bytes = Buffer.concat([
          Buffer.from('{"event":"media","x":"'),
          this.slice(rng.int(1, 64)),
          Buffer.from([0xff, 0xfe, 0xc0]),
          Buffer.from('"}'),
        ]);
        return { data: bytes, binary: false, certainlyInvalid: false, bytes: bytes.length };
      }
      case 7:
        return text(JSON.stringify({ event: { media: true }, media: { payload: this.base64(160) } }));
      case 8:
        return text(JSON.stringify(this.randomJson(rng.int(0, 4))));
      default:
        return text(`{"event":"media","media":{"payload":"${this.base64(rng.int(1, 400))}`);
    }
  }

  /** A frame past the server's `maxPayload`: the socket is closed with 1009. */
  oversize(): Frame {
    const length = this.rng.int(OVER_MAX_PAYLOAD, OVER_MAX_PAYLOAD + 64 * 1024);
    if (this.rng.chance(0.5)) return binary(Buffer.alloc(length, 0x61));
    return text(JSON.stringify({ event: 'media', media: { payload: 'A'.repeat(length) } }));
  }

  /**
   * A valid frame of any kind, changed in one or two ways. `keepOpen` leaves out what may still be
   * a valid `stop`, so a long-lived stream is not ended by chance.
   */
  mutated(
    ids: StreamIds,
    opts: { customParameters?: Record<string, string>; keepOpen?: boolean } = {},
  ): Frame {
    const rng = this.rng;
    const templates = [
      () => this.startObject(ids, opts.customParameters ?? {}),
      () => this.mediaObject(ids),
      () => this.mediaObject(ids),
      () => this.markObject(ids),
      () => this.dtmfObject(ids),
      (): { [key: string]: Json } => ({ event: 'connected', protocol: 'Call', version: '1.0.0' }),
    ];
    if (!opts.keepOpen) templates.push(() => this.stopObject(ids));
    const template = rng.pick(templates)();
    const changes = rng.int(1, 2);
    for (let i = 0; i < changes; i++) this.mutate(template, opts.keepOpen ?? false);
    let serialized = JSON.stringify(template);
    const depth = rng.int(100, 10_000);
    serialized = serialized.replace(`"${DEEP}"`, `${'{"a":'.repeat(depth)}[1]${'}'.repeat(depth)}`);
    const damage = rng.next();
    if (damage < 0.1) serialized = serialized.slice(0, rng.int(0, serialized.length - 1));
    else if (damage < 0.2) serialized = this.flipCharacters(serialized);
    return text(serialized);
  }

  private mutate(frame: { [key: string]: Json }, keepOpen: boolean): void {
    const rng = this.rng;
    const path = rng.pick(leafPaths(frame));
    if (path.length === 0) {
      frame.extra = this.randomJson(2);
      return;
    }
    const parent =
      path.length === 1 ? frame : (walk(frame, path.slice(0, -1)) as { [key: string]: Json } | Json[]);
    const key = path[path.length - 1]!;
    const set = (value: Json | undefined) => {
      if (Array.isArray(parent)) {
        if (value === undefined) parent.splice(Number(key), 1);
        else parent[Number(key)] = value;
      } else if (value === undefined) delete parent[key];
      else parent[key] = value;
    };
    switch (rng.int(0, 11)) {
      case 0:
        set(undefined);
        break;
      case 1:
        set(rng.pick<Json>([0, -1, 1.5, 2 ** 53, 1e308, null, true, false, [], {}, [1, 2], { a: 1 }]));
        break;
      case 2:
        set('x'.repeat(rng.int(BIG_MIN, BIG_MAX)));
        break;
      case 3:
        set(this.randomString(rng.int(1, 64)));
        break;
      case 4: {
        // Payloads that are not strict base64: bad alphabet, missing padding, odd length, whitespace.
        const media = objectAt(frame, 'media');
        const good = this.base64(rng.int(1, 300));
        media.payload = rng.pick([
          `${good.slice(0, -1)}`,
          `${good}=`,
          good.replace(/[A-Z]/, '!'),
          ` ${good}`,
          `${good.slice(0, 3)}\n${good.slice(3)}`,
          good.replace(/=+$/, ''),
          '====',
          '\u00e9\u00e9\u00e9\u00e9',
        ]);
        frame.media = media;
        break;
      }
      case 5:
        frame.event = rng.pick<Json>([
          'media',
          'start',
          keepOpen ? 'STOP' : 'stop',
          'mark',
          'dtmf',
          'clear',
          'Media',
          '',
          'medi\u0430',
          7,
          null,
        ]);
        break;
      case 6:
        // Replaced by deeply nested JSON once serialized (mutating a deep object would recurse).
        set(DEEP);
        break;
      case 7:
        set(
          rng.pick(['\u{1F4DE}\u{1F4DE}', '\ud800', '\udfff\ud800', '\u0000', '\u202e', 'e\u0301', '\ufeff']),
        );
        break;
      case 8: {
        // Custom parameters: many, large, prototype-shaped.
        const start = objectAt(frame, 'start');
        const params: { [key: string]: Json } = JSON.parse(
          '{"__proto__":{"token":"polluted"},"constructor":"x"}',
        );
        const count = rng.int(1, 200);
        for (let i = 0; i < count; i++) params[`p${i}`] = 'v'.repeat(rng.int(0, 250));
        params.token = rng.pick<Json>([this.randomString(40), 'v1.a.b', 'v1..', '', 12, null]);
        start.customParameters = params;
        frame.start = start;
        break;
      }
      case 9:
        // Numbers where strings are due.
        set(rng.int(-5, 100_000));
        break;
      case 10: {
        const media = objectAt(frame, 'media');
        media.track = rng.pick<Json>(['outbound', 'both', 'inbound_track', 1, null, '']);
        frame.media = media;
        break;
      }
      default:
        frame.extra = this.randomJson(3);
        break;
    }
  }

  private flipCharacters(serialized: string): string {
    const chars = [...serialized];
    const flips = this.rng.int(1, 5);
    for (let i = 0; i < flips && chars.length > 0; i++) {
      chars[this.rng.int(0, chars.length - 1)] = this.rng.pick([
        '"',
        '{',
        '}',
        ':',
        ',',
        '\\',
        'x',
        '\u00ff',
      ]);
    }
    return chars.join('');
  }

  randomString(length: number): string {
    const alphabets = [
      'abcdefghijklmnopqrstuvwxyz0123456789',
      '{}[]":,\\/ \t\n',
      '\u00e9\u00fc\u4e2d\u6587\u0430\u05d0\u0627',
      '\u{1F600}\u{1F4DE}\u{10FFFF}',
    ];
    let out = '';
    while (out.length < length) {
      const alphabet = [...this.rng.pick(alphabets)];
      out += alphabet[this.rng.int(0, alphabet.length - 1)];
    }
    return out;
  }

  private randomJson(depth: number): Json {
    const rng = this.rng;
    if (depth <= 0) return rng.pick<Json>([null, true, 0, -3.5, 'media', this.randomString(rng.int(0, 20))]);
    if (rng.chance(0.5)) return Array.from({ length: rng.int(0, 4) }, () => this.randomJson(depth - 1));
    const out: { [key: string]: Json } = {};
    const keys = rng.int(0, 4);
    for (let i = 0; i < keys; i++) {
      out[rng.pick(['event', 'media', 'start', 'payload', 'streamSid', this.randomString(5)])] =
        this.randomJson(depth - 1);
    }
    return out;
  }
}

/** `frame[key]` as an object, replacing whatever else an earlier mutation left there. */
function objectAt(frame: { [key: string]: Json }, key: string): { [key: string]: Json } {
  const value = frame[key];
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) return value;
  return {};
}

function leafPaths(value: Json, prefix: string[] = []): string[][] {
  if (value === null || typeof value !== 'object') return [prefix];
  const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value);
  if (entries.length === 0) return [prefix];
  const paths = entries.flatMap(([key, child]) => leafPaths(child, [...prefix, key]));
  // Whole sub-objects are targets too, not only their leaves.
  return prefix.length > 0 ? [prefix, ...paths] : paths;
}

function walk(value: Json, path: string[]): Json {
  let at: Json = value;
  for (const key of path) at = (at as { [key: string]: Json })[key] as Json;
  return at;
}
