// What the caller actually heard of each agent reply, from carrier marks (docs/protocols/twilio.md):
// a mark is echoed once the audio before it has played, and after a `clear` every pending mark is
// echoed at once, so an echo only proves playback when no clear came between sending and echo.
//
// The estimate is marks only, the conservative choice: an interrupted reply counts as heard up to
// the last mark echoed before the clear, never further. It can under-count by up to `markEveryMs`
// plus the echo's trip back; guessing from send times instead would over-count whenever the
// carrier buffers or the network stalls, and a transcript must not claim words nobody heard.
//
// Driving it: `startReply` on `AgentStartedSpeaking`, `setReplyText` on the assistant's
// `ConversationText`, `audioSent` for each outbound chunk (send the mark it returns right after
// that chunk), `endMark` after the reply's last chunk, `markEchoed` for every carrier mark event,
// `cleared` together with the `clear` sent on barge-in.
import { type Clock, type ClockTimer, realClock } from '../clock.js';

export interface HeardAudioOptions {
  /** Byte rate of the outbound stream (8 for μ-law 8 kHz). */
  bytesPerMs: number;
  /** Audio between two progress marks. */
  markEveryMs?: number;
  /** Timers of `waitForMark`, and the time of `startedAtMs` unless `nowMs` is given. */
  clock?: Clock;
  /** Clock for `startedAtMs`. */
  nowMs?: () => number;
}

export interface HeardReply {
  text: string;
  /** Audio sent to the carrier for this reply. */
  sentMs: number;
  /** Audio confirmed played by a mark echo (see the estimate above). */
  heardMs: number;
  /** A clear cut the reply before all of its audio was confirmed played. */
  interrupted: boolean;
  /** Estimate: the share `heardMs / sentMs` of `text`, cut back to a word boundary. */
  heardText: string;
  /** When its first audio was sent, on the `nowMs` clock; null if none was. */
  startedAtMs: number | null;
}

export type MarkWaitResult = 'played' | 'timeout';

interface Reply {
  no: number;
  text: string;
  sentBytes: number;
  heardBytes: number;
  lastMarkBytes: number;
  /** `endMark` was issued: text arriving now with text already set belongs to the next reply. */
  ended: boolean;
  interrupted: boolean;
  startedAtMs: number | null;
}

interface PendingMark {
  seq: number;
  reply: Reply | null;
  atBytes: number;
}

interface Waiter {
  resolve(result: MarkWaitResult): void;
  timer: ClockTimer;
}

/**
 * A second: an interrupted reply is known to within a second of what was heard, and a progress
 * mark costs a message to the carrier and its echo back (at 300 calls, marks every 500 ms cost
 * about 5% of the server's CPU; BENCHMARKS.md "The per-frame path").
 */
export const DEFAULT_MARK_EVERY_MS = 1_000;

/** Echoes remembered for a `waitForMark` that comes after its echo. */
const RECENT_PLAYED = 32;
/** Names whose late echo must be ignored; Twilio echoes them right after the clear. */
const MAX_FLUSHED = 1024;

export class HeardAudioTracker {
  readonly #bytesPerMs: number;
  readonly #markEveryBytes: number;
  readonly #now: () => number;
  readonly #clock: Clock;
  readonly #replies: Reply[] = [];
  #current: Reply | null = null;
  #seq = 0;
  /** Marks sent and not yet echoed, in sending order (= echo order). */
  readonly #pending = new Map<string, PendingMark>();
  readonly #flushed = new Set<string>();
  readonly #recentPlayed: string[] = [];
  readonly #waiters = new Map<string, Waiter[]>();
  #disposed = false;

  constructor(opts: HeardAudioOptions) {
    if (!(opts.bytesPerMs > 0)) throw new RangeError('bytesPerMs must be positive');
    this.#bytesPerMs = opts.bytesPerMs;
    this.#markEveryBytes = (opts.markEveryMs ?? DEFAULT_MARK_EVERY_MS) * opts.bytesPerMs;
    this.#clock = opts.clock ?? realClock;
    this.#now = opts.nowMs ?? (() => this.#clock.now());
  }

  /** A new reply begins. A reply opened by its text and still without audio is this one. */
  startReply(text?: string): void {
    const current = this.#current;
    if (current && current.sentBytes === 0) {
      if (text !== undefined) current.text = text;
      current.ended = false;
      return;
    }
    this.#open(text ?? '');
  }

  /**
   * The reply's text, before or after its audio. Text for a reply that already has text and has
   * ended opens the next reply; text for a reply still running is appended to it.
   */
  setReplyText(text: string): void {
    const current = this.#current;
    if (!current || (current.ended && current.text !== '')) this.#open(text);
    else current.text = current.text === '' ? text : `${current.text} ${text}`;
  }

  /**
   * Records audio sent to the carrier. Returns a mark name to send right after it when another
   * `markEveryMs` of audio has gone out since the reply's last mark, else null.
   */
  audioSent(bytes: number): string | null {
    if (this.#disposed || bytes <= 0) return null;
    const reply = this.#current ?? this.#open('');
    reply.startedAtMs ??= this.#now();
    reply.sentBytes += bytes;
    if (reply.sentBytes - reply.lastMarkBytes < this.#markEveryBytes) return null;
    return this.#issue(reply, false);
  }

  /** A mark to send after the reply's last audio: its echo means the whole reply played. */
  endMark(): string {
    const reply = this.#current;
    if (reply) reply.ended = true;
    return this.#issue(reply, true);
  }

  /**
   * A carrier mark event. Returns true when it counts as played: not an echo flushed by a clear.
   * Marks echo in order, so it also confirms every earlier pending mark.
   */
  markEchoed(name: string): boolean {
    if (this.#flushed.delete(name)) return false;
    const mark = this.#pending.get(name);
    if (mark) {
      for (const [earlierName, earlier] of this.#pending) {
        if (earlier.seq > mark.seq) break;
        this.#pending.delete(earlierName);
        if (earlier.reply) earlier.reply.heardBytes = Math.max(earlier.reply.heardBytes, earlier.atBytes);
        this.#played(earlierName);
      }
      return true;
    }
    // A name this tracker did not issue: still settle anyone waiting on it.
    this.#played(name);
    return true;
  }

  /**
   * The carrier was told to `clear` (barge-in). Pending marks will echo at once without having
   * played, so their echoes are ignored; a reply with audio not confirmed played is interrupted.
   */
  cleared(): void {
    const affected = new Set<Reply>();
    if (this.#current) affected.add(this.#current);
    for (const [name, mark] of this.#pending) {
      this.#flush(name);
      if (mark.reply) affected.add(mark.reply);
    }
    this.#pending.clear();
    // Marks the session sent itself and waits on were pending at the carrier too.
    for (const name of this.#waiters.keys()) this.#flush(name);
    for (const reply of affected) if (reply.sentBytes > reply.heardBytes) reply.interrupted = true;
    this.#current = null;
  }

  replies(): HeardReply[] {
    return this.#replies.map((r) => ({
      text: r.text,
      sentMs: Math.round(r.sentBytes / this.#bytesPerMs),
      heardMs: Math.round(r.heardBytes / this.#bytesPerMs),
      interrupted: r.interrupted,
      heardText: heardPrefix(r.text, r.sentBytes > 0 ? r.heardBytes / r.sentBytes : 0),
      startedAtMs: r.startedAtMs,
    }));
  }

  /**
   * Resolves `played` when the mark is echoed (not by a clear's flush), `timeout` after
   * `timeoutMs` or on `dispose`. Used to hang up only once the goodbye has played; a clear
   * does not settle it early, the wait runs to its timeout.
   */
  waitForMark(name: string, timeoutMs: number): Promise<MarkWaitResult> {
    if (this.#recentPlayed.includes(name)) return Promise.resolve('played');
    if (this.#disposed) return Promise.resolve('timeout');
    return new Promise((resolve) => {
      const waiter: Waiter = {
        resolve,
        timer: this.#clock.setTimeout(() => {
          const list = this.#waiters.get(name);
          const rest = list?.filter((w) => w !== waiter) ?? [];
          if (rest.length > 0) this.#waiters.set(name, rest);
          else this.#waiters.delete(name);
          resolve('timeout');
        }, timeoutMs),
      };
      const list = this.#waiters.get(name);
      if (list) list.push(waiter);
      else this.#waiters.set(name, [waiter]);
    });
  }

  /** Settles every wait as `timeout` and stops tracking. */
  dispose(): void {
    this.#disposed = true;
    for (const list of this.#waiters.values()) {
      for (const waiter of list) {
        this.#clock.clearTimeout(waiter.timer);
        waiter.resolve('timeout');
      }
    }
    this.#waiters.clear();
    this.#pending.clear();
    this.#flushed.clear();
  }

  #open(text: string): Reply {
    const reply: Reply = {
      no: this.#replies.length + 1,
      text,
      sentBytes: 0,
      heardBytes: 0,
      lastMarkBytes: 0,
      ended: false,
      interrupted: false,
      startedAtMs: null,
    };
    this.#replies.push(reply);
    this.#current = reply;
    return reply;
  }

  #issue(reply: Reply | null, end: boolean): string {
    const seq = ++this.#seq;
    const name = `r${reply?.no ?? 0}-m${seq}${end ? '-end' : ''}`;
    if (this.#disposed) return name;
    const atBytes = reply?.sentBytes ?? 0;
    if (reply) reply.lastMarkBytes = atBytes;
    this.#pending.set(name, { seq, reply, atBytes });
    return name;
  }

  #played(name: string): void {
    this.#recentPlayed.push(name);
    if (this.#recentPlayed.length > RECENT_PLAYED) this.#recentPlayed.shift();
    const list = this.#waiters.get(name);
    if (!list) return;
    this.#waiters.delete(name);
    for (const waiter of list) {
      this.#clock.clearTimeout(waiter.timer);
      waiter.resolve('played');
    }
  }

  #flush(name: string): void {
    this.#flushed.add(name);
    if (this.#flushed.size > MAX_FLUSHED) {
      const oldest = this.#flushed.values().next().value;
      if (oldest !== undefined) this.#flushed.delete(oldest);
    }
  }
}

/**
 * The first `fraction` of `text`, cut back to a word boundary: a word cut in half was not heard.
 * An estimate: speech rate varies along a reply, so this is proportional, not aligned.
 */
export function heardPrefix(text: string, fraction: number): string {
  if (!(fraction > 0)) return '';
  if (fraction >= 1) return text;
  const cut = Math.floor(text.length * fraction);
  const insideWord = cut > 0 && /\S/.test(text[cut] ?? ' ') && /\S/.test(text[cut - 1]!);
  const kept = text.slice(0, cut);
  if (!insideWord) return kept.trimEnd();
  const wordStart = kept.search(/\S*$/);
  return kept.slice(0, wordStart).trimEnd();
}
