// The way to the caller: agent audio cut to the carrier's rules (whole frames, message sizes,
// pacing), the playout clock that says whether the caller is hearing the agent, the marks that say
// what was heard, and the mute that keeps an interrupted reply from playing on.
//
// Its states are the agent's speech as the caller gets it: `idle` (nothing announced; audio still
// passes, a greeting may come without `AgentStartedSpeaking`), `replying` (between
// `AgentStartedSpeaking` and `AgentAudioDone`), `muted` (after a barge-in, until the next reply
// starts: no more audio of the interrupted one) and `closed` (the call ended).
//
// Carriers differ in what they accept (docs/protocols/vonage.md: exactly one 20 ms frame per
// message, and a buffer of 3,072 messages; docs/protocols/exotel.md: multiples of 320 bytes
// between 3,200 and 100,000). A carrier that takes any size gets the last partial frame of a reply
// as is, so no byte is added; one with fixed sizes gets it padded with silence.
import { type MediaFormat, bytesPerMs, silenceByte } from '../../audio/format.js';
import { OutboundFramer } from '../../audio/framer.js';
import type { DownlinkRules } from '../carrier-port.js';
import type { Clock, ClockTimer } from '../clock.js';
import { type HeardReply, HeardAudioTracker, type MarkWaitResult } from './heard-audio.js';
import type { CallLeg } from '../leg.js';
import { PlayoutClock } from './playout.js';

export const DOWNLINK_TRANSITIONS = Object.freeze({
  idle: ['replying', 'muted', 'closed'],
  replying: ['idle', 'muted', 'closed'],
  muted: ['replying', 'idle', 'closed'],
  closed: [],
} as const satisfies Record<string, readonly string[]>);

export type DownlinkState = keyof typeof DOWNLINK_TRANSITIONS;

/**
 * Agent audio held for pacing, at most: a reply longer than this (a minute at the carrier's byte
 * rate; the agent sends faster than real time) is cut, the rest of it dropped and counted, rather
 * than held in memory however long it runs. Audio of the bridge's own (`play`) is exempt: it is
 * one buffer already in memory, which the queue only slices.
 */
export const MAX_PACED_MS = 60_000;

/** What the downlink tells a listener on the call's audio (audio-listener.ts), on its clock. */
export interface DownlinkTap {
  /** Bytes sent toward the caller, and when they start to play by the playout model. */
  played(audio: Buffer, atMs: number): void;
  /** A barge-in: what was to play after `atMs` was dropped by the carrier. */
  truncated(atMs: number): void;
}

/** Relayed audio, counted per message sent (the metrics' plain per-frame counters). */
export interface DownlinkCounts {
  downFrames: number;
  downBytes: number;
}

export interface DownlinkOptions {
  leg: Pick<CallLeg, 'sendAudio' | 'clear' | 'mark'>;
  rules: DownlinkRules;
  format: MediaFormat;
  clock: Clock;
  counts: DownlinkCounts;
  /** Audio between two progress marks (see heard-audio.ts). */
  markEveryMs?: number;
  /** Bytes of a reply cut because the pacing queue was full (MAX_PACED_MS). */
  onPacedDropped?(bytes: number): void;
}

type Paced = { kind: 'audio'; bytes: Buffer } | { kind: 'mark'; name: string };
type ReplyEvent = 'started' | 'done';

/** Throws on rules no carrier could mean: they come from code, not from the wire. */
function checkRules(rules: DownlinkRules): void {
  const { frameBytes, maxMessageBytes, minMessageBytes, paceAheadMs } = rules;
  if (!Number.isInteger(frameBytes) || frameBytes <= 0)
    throw new RangeError('frameBytes must be a positive integer');
  if (maxMessageBytes !== undefined && !(maxMessageBytes >= frameBytes)) {
    throw new RangeError('maxMessageBytes must hold at least one frame');
  }
  if (minMessageBytes !== undefined && !(minMessageBytes > 0))
    throw new RangeError('minMessageBytes must be positive');
  if (
    minMessageBytes !== undefined &&
    maxMessageBytes !== undefined &&
    Math.ceil(minMessageBytes / frameBytes) * frameBytes > maxMessageBytes
  ) {
    throw new RangeError('minMessageBytes, in whole frames, must not exceed maxMessageBytes');
  }
  if (paceAheadMs !== undefined && !(paceAheadMs > 0)) throw new RangeError('paceAheadMs must be positive');
}

export class Downlink {
  #state: DownlinkState = 'idle';
  readonly #leg: DownlinkOptions['leg'];
  readonly #clock: Clock;
  readonly #counts: DownlinkCounts;
  readonly #bytesPerMs: number;
  readonly #frameBytes: number;
  /** Largest message, in whole frames' bytes; 0: no limit. */
  readonly #maxBytes: number;
  /** Smallest message: a reply's last chunk is padded up to it. */
  readonly #minBytes: number;
  /** The carrier takes fixed sizes only: a partial last frame is padded with silence. */
  readonly #padTail: boolean;
  readonly #silence: number;
  readonly #paceAheadMs: number | null;
  readonly #framer: OutboundFramer;
  readonly #playout: PlayoutClock;
  readonly #heard: HeardAudioTracker;
  #paced: Paced[] = [];
  #pacedBytes = 0;
  #paceTimer: ClockTimer | null = null;
  /** Largest number of bytes the pacing queue holds. */
  readonly #maxPacedBytes: number;
  /** The pacing queue overflowed: the rest of this reply is dropped until the next one starts. */
  #cut = false;
  /** `play` is sending the bridge's own audio (not bounded by MAX_PACED_MS). */
  #own = false;
  readonly #onPacedDropped: ((bytes: number) => void) | null;
  #tap: DownlinkTap | null = null;
  #waiters: Array<(event: ReplyEvent | 'closed') => void> = [];

  constructor(opts: DownlinkOptions) {
    checkRules(opts.rules);
    const { rules, format, clock } = opts;
    this.#leg = opts.leg;
    this.#clock = clock;
    this.#counts = opts.counts;
    this.#bytesPerMs = bytesPerMs(format);
    this.#frameBytes = rules.frameBytes;
    this.#maxBytes =
      rules.maxMessageBytes === undefined
        ? 0
        : Math.floor(rules.maxMessageBytes / rules.frameBytes) * rules.frameBytes;
    this.#minBytes = rules.minMessageBytes ?? 0;
    this.#padTail = rules.maxMessageBytes !== undefined || rules.minMessageBytes !== undefined;
    this.#silence = silenceByte(format.encoding);
    this.#paceAheadMs = rules.paceAheadMs ?? null;
    this.#maxPacedBytes = MAX_PACED_MS * this.#bytesPerMs;
    this.#onPacedDropped = opts.onPacedDropped ?? null;
    this.#framer = new OutboundFramer(rules.frameBytes, this.#minBytes);
    this.#playout = new PlayoutClock(this.#bytesPerMs);
    this.#heard = new HeardAudioTracker({
      bytesPerMs: this.#bytesPerMs,
      clock,
      ...(opts.markEveryMs !== undefined && { markEveryMs: opts.markEveryMs }),
    });
  }

  get state(): DownlinkState {
    return this.#state;
  }

  /** Where what is played and truncated is told; null: nowhere, and no work per message for it. */
  tap(tap: DownlinkTap | null): void {
    this.#tap = tap;
  }

  /**
   * Agent audio. Returns the bytes passed on toward the caller now (0 while held for a whole
   * frame or a minimum size, while muted, or once closed).
   */
  audio(chunk: Buffer): number {
    if (this.#state === 'muted' || this.#state === 'closed') return 0;
    const out = this.#framer.push(chunk);
    if (!out) return 0;
    this.#send(out);
    return out.length;
  }

  /** `AgentStartedSpeaking`: a new reply; what follows is not the interrupted one. */
  replyStarted(): void {
    if (this.#state === 'closed') return;
    if (this.#state !== 'replying') this.#move('replying');
    this.#cut = false;
    this.#heard.startReply();
    this.#notify('started');
  }

  /** The assistant's text of the reply (before or after its audio). */
  replyText(text: string): void {
    this.#heard.setReplyText(text);
  }

  /** `AgentAudioDone`: the reply's last audio goes out, then a mark whose echo means it all played. */
  replyDone(): void {
    if (this.#state === 'closed') return;
    if (this.#state !== 'muted') {
      this.#flushTail();
      this.#mark(this.#heard.endMark());
      if (this.#state === 'replying') this.#move('idle');
    }
    this.#cut = false;
    this.#notify('done');
  }

  /**
   * The caller spoke over the agent: the carrier drops what it holds, nothing more of this reply
   * goes out. Returns whether the caller was hearing the agent (a real interruption).
   */
  bargeIn(): boolean {
    if (this.#state === 'closed') return false;
    const wasPlaying = this.isPlaying();
    if (this.#state !== 'muted') this.#move('muted');
    this.#framer.reset();
    this.#dropPaced();
    this.#leg.clear();
    this.#heard.cleared();
    this.#playout.clear();
    this.#tap?.truncated(this.#clock.now());
    this.#notify('done');
    return wasPlaying;
  }

  /** The agent went away: a partial frame of its reply is dropped, and the next agent is heard. */
  reset(): void {
    if (this.#state === 'closed') return;
    this.#framer.reset();
    this.#cut = false;
    if (this.#state !== 'idle') this.#move('idle');
    this.#notify('done');
  }

  /** Audio of the bridge's own (the fallback message), played whole, unmuted. */
  play(audio: Buffer): void {
    if (this.#state === 'closed') return;
    if (this.#state !== 'idle') this.#move('idle');
    this.#cut = false;
    this.#own = true;
    this.audio(audio);
    this.#flushTail();
    this.#own = false;
  }

  /** A carrier mark echo. */
  markPlayed(name: string): void {
    this.#heard.markEchoed(name);
  }

  /** Whether the caller is hearing the agent now, by the playout model. */
  isPlaying(): boolean {
    return this.#pacedBytes > 0 || this.#playout.isPlaying(this.#clock.now());
  }

  /** Audio sent or waiting to be sent that has not played yet, by the playout model. */
  pendingMs(): number {
    return this.#playout.remainingMs(this.#clock.now()) + this.#pacedBytes / this.#bytesPerMs;
  }

  /** What was sent and heard of each reply so far. */
  replies(): HeardReply[] {
    return this.#heard.replies();
  }

  /** Resolves true when the reply starts or ends (as asked), false after `timeoutMs` or on close. */
  waitForReply(event: ReplyEvent, timeoutMs: number): Promise<boolean> {
    if (this.#state === 'closed') return Promise.resolve(false);
    return new Promise((resolve) => {
      const settle = (result: boolean) => {
        this.#clock.clearTimeout(timer);
        this.#waiters = this.#waiters.filter((w) => w !== waiter);
        resolve(result);
      };
      const waiter = (happened: ReplyEvent | 'closed') => {
        if (happened === 'closed') settle(false);
        else if (happened === event) settle(true);
      };
      const timer = this.#clock.setTimeout(() => settle(false), timeoutMs);
      this.#waiters.push(waiter);
    });
  }

  /** Marks everything sent so far; resolves when the carrier confirms it played, or at `timeoutMs`. */
  untilHeard(timeoutMs: number): Promise<MarkWaitResult> {
    if (this.#state === 'closed') return Promise.resolve('timeout');
    if (this.#state !== 'muted') this.#flushTail();
    const name = this.#heard.endMark();
    this.#mark(name);
    return this.#heard.waitForMark(name, timeoutMs);
  }

  /**
   * The last words of a polite end: waits for the reply in progress to be sent, then for the
   * caller to have heard all of it, within `capMs` in all.
   */
  async lastWordsHeard(capMs: number): Promise<void> {
    const deadline = this.#clock.now() + capMs;
    if (this.#state === 'replying') await this.waitForReply('done', capMs);
    if (this.#state === 'closed') return;
    const left = deadline - this.#clock.now();
    if (left <= 0) return;
    await this.untilHeard(Math.min(left, this.pendingMs() + 5_000));
  }

  /** The call ended: nothing more goes out, every wait settles. */
  close(): void {
    if (this.#state === 'closed') return;
    this.#move('closed');
    this.#dropPaced();
    this.#framer.reset();
    this.#heard.dispose();
    this.#notify('closed');
    this.#waiters = [];
  }

  #move(next: DownlinkState): void {
    const allowed: readonly string[] = DOWNLINK_TRANSITIONS[this.#state];
    if (!allowed.includes(next)) throw new Error(`downlink cannot move from ${this.#state} to ${next}`);
    this.#state = next;
  }

  #notify(event: ReplyEvent | 'closed'): void {
    for (const waiter of [...this.#waiters]) waiter(event);
  }

  /** The held rest of a reply goes out, padded where the carrier takes fixed sizes only. */
  #flushTail(): void {
    const rest = this.#framer.flush();
    if (!rest) return;
    if (!this.#padTail) {
      this.#send(rest);
      return;
    }
    const frames = Math.ceil(rest.length / this.#frameBytes) * this.#frameBytes;
    const padded = Buffer.alloc(
      Math.max(frames, Math.ceil(this.#minBytes / this.#frameBytes) * this.#frameBytes),
      this.#silence,
    );
    rest.copy(padded);
    this.#send(padded);
  }

  /** Whole frames, split into messages no larger than the carrier takes, each counted as heard audio. */
  #send(audio: Buffer): void {
    const max = this.#maxBytes;
    if (max === 0 || audio.length <= max) {
      this.#message(audio);
      return;
    }
    // Even pieces, so none falls under a minimum size the whole met.
    const frames = audio.length / this.#frameBytes;
    const pieces = Math.ceil(audio.length / max);
    const base = Math.floor(frames / pieces);
    const longer = frames % pieces;
    let at = 0;
    for (let i = 0; i < pieces; i++) {
      const bytes = (base + (i < longer ? 1 : 0)) * this.#frameBytes;
      this.#message(audio.subarray(at, at + bytes));
      at += bytes;
    }
  }

  #message(audio: Buffer): void {
    if (
      this.#paceAheadMs !== null &&
      !this.#own &&
      (this.#cut || this.#pacedBytes + audio.length > this.#maxPacedBytes)
    ) {
      // Cut at a message boundary, and for the rest of the reply: the caller hears its start whole.
      this.#cut = true;
      this.#onPacedDropped?.(audio.length);
      return;
    }
    // The tracker counts audio as sent when it enters the downlink, so its marks follow it in order.
    const mark = this.#heard.audioSent(audio.length);
    if (this.#paceAheadMs === null) {
      this.#wire(audio);
    } else {
      this.#paced.push({ kind: 'audio', bytes: audio });
      this.#pacedBytes += audio.length;
      this.#release();
    }
    if (mark) this.#mark(mark);
  }

  #mark(name: string): void {
    if (this.#paced.length === 0) this.#leg.mark(name);
    else this.#paced.push({ kind: 'mark', name });
  }

  #wire(audio: Buffer): void {
    this.#leg.sendAudio(audio);
    const startsAtMs = this.#playout.queued(audio.length, this.#clock.now());
    if (this.#tap !== null) this.#tap.played(audio, startsAtMs);
    this.#counts.downFrames++;
    this.#counts.downBytes += audio.length;
  }

  /** Sends what the pace allows: audio up to `paceAheadMs` ahead of real time, marks in their place. */
  #release(): void {
    const aheadMs = this.#paceAheadMs!;
    while (this.#paced.length > 0) {
      const head = this.#paced[0]!;
      if (head.kind === 'mark') {
        this.#paced.shift();
        this.#leg.mark(head.name);
        continue;
      }
      const playingMs = this.#playout.remainingMs(this.#clock.now());
      const headMs = head.bytes.length / this.#bytesPerMs;
      if (playingMs > 0 && playingMs + headMs > aheadMs) {
        this.#schedule(playingMs + headMs - aheadMs);
        return;
      }
      this.#paced.shift();
      this.#pacedBytes -= head.bytes.length;
      this.#wire(head.bytes);
    }
  }

  #schedule(delayMs: number): void {
    if (this.#paceTimer !== null) return;
    this.#paceTimer = this.#clock.setTimeout(
      () => {
        this.#paceTimer = null;
        this.#release();
      },
      Math.max(1, Math.ceil(delayMs)),
    );
  }

  #dropPaced(): void {
    if (this.#paceTimer !== null) this.#clock.clearTimeout(this.#paceTimer);
    this.#paceTimer = null;
    this.#paced = [];
    this.#pacedBytes = 0;
  }
}
