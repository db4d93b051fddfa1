// Audio that identifies itself, so loss, order and latency are measured end to end from the bytes
// alone. Every 20 ms frame, in the carrier's own format (160 bytes of μ-law, 320 of 16-bit PCM at
// 8 kHz, 640 at 16 kHz: docs/protocols/), carries a header and a filler pattern fixed per call:
//
//   0-1 magic (direction) · 2-5 call index · 6-9 sequence number in the call's direction ·
//   10-17 wall-clock send time in ms (float64) · 18 flags · 19-end filler
//
// Both ends run on one machine, where `performance.timeOrigin + performance.now()` is one clock to
// well under a millisecond once each process's offset from the orchestrator is taken out (measured
// at start, see `setClockOffsetMs`), so the receiver subtracts the embedded send time from its own
// clock. The filler bytes alternate between loud μ-law codes, so a
// speech detector on the path hears a caller who keeps talking and never starts a silence timer
// (read as 16-bit PCM, every sample is near full scale: loud too).
import { bytesPerMs, type MediaFormat } from '../audio/format.js';

/** A μ-law 8 kHz frame: Twilio's, Telnyx's and Plivo's. */
export const FRAME_BYTES = 160;
const FRAME_MS = 20;

/** Bytes of one 20 ms frame of `format`. */
export function frameBytesOf(format: MediaFormat): number {
  return Math.round(bytesPerMs(format) * FRAME_MS);
}
export const UPLINK_MAGIC = 0xcb01;
export const DOWNLINK_MAGIC = 0xcb02;
/** Flag: the first frame of an agent burst (one WebSocket message), the downlink latency sample. */
export const FLAG_BURST_START = 1;

const HEADER_BYTES = 19;

/** This process's wall clock, as sampled when it started, advanced by the monotonic clock. */
export function ownClockMs(): number {
  return performance.timeOrigin + performance.now();
}

let clockOffsetMs = 0;

/**
 * Sets how far this process's clock runs ahead of the orchestrator's (measured over IPC). A clock
 * adjustment between two processes' starts leaves them that far apart for good (each keeps the
 * wall time it started with), so every time a child records is brought onto the one clock.
 */
export function setClockOffsetMs(offsetMs: number): void {
  clockOffsetMs = offsetMs;
}

/** Now, on the clock every bench process shares (the orchestrator's). */
export function wallNowMs(): number {
  return performance.timeOrigin + performance.now() - clockOffsetMs;
}

/** The frame of `call` (`frameBytes` long) with its filler in place and an empty header. */
export function frameTemplate(call: number, frameBytes = FRAME_BYTES): Buffer {
  const frame = Buffer.alloc(frameBytes);
  for (let i = HEADER_BYTES; i < frameBytes; i++) {
    // μ-law codes 0x00-0x1f and 0x80-0x9f are the loudest of each sign.
    frame[i] = (i & 1 ? 0x80 : 0x00) | ((call * 7 + i * 13) & 0x1f);
  }
  return frame;
}

/** Writes a frame at `offset` of `target`: the template's filler and the header (the template's length). */
export function writeFrame(
  target: Buffer,
  offset: number,
  template: Buffer,
  magic: number,
  call: number,
  seq: number,
  sentAtMs: number,
  flags: number,
): void {
  template.copy(target, offset + HEADER_BYTES, HEADER_BYTES, template.length);
  target.writeUInt16BE(magic, offset);
  target.writeUInt32BE(call, offset + 2);
  target.writeUInt32BE(seq, offset + 6);
  target.writeDoubleLE(sentAtMs, offset + 10);
  target[offset + 18] = flags;
}

/** Reads the call index of a frame, or -1 when the bytes at `offset` are not a frame of `magic`. */
export function frameCall(data: Buffer, offset: number, magic: number, frameBytes = FRAME_BYTES): number {
  if (offset + frameBytes > data.length || data.readUInt16BE(offset) !== magic) return -1;
  return data.readUInt32BE(offset + 2);
}

export type FrameSink = (seq: number, sentAtMs: number, flags: number) => void;

export interface StreamTally {
  /** Unique valid frames' bytes that arrived after every lower sequence number. */
  inOrderBytes: number;
  /** Unique valid frames' bytes that arrived after a higher sequence number. */
  reorderedBytes: number;
  /** Valid frames seen a second time. */
  duplicateBytes: number;
  /** Bytes that are not an intact frame of this call and direction (damage, cross-talk, misalignment). */
  corruptBytes: number;
}

/** At most this many skipped sequence numbers are remembered as candidates for late arrival. */
const MAX_MISSING = 100_000;

/**
 * Checks one direction of one call: the received bytes, taken as a stream (the path may split or
 * join WebSocket messages), must be the sender's frames in order. Lost bytes are the sender's count
 * minus `inOrderBytes + reorderedBytes`.
 */
export class StreamVerifier {
  readonly tally: StreamTally = {
    inOrderBytes: 0,
    reorderedBytes: 0,
    duplicateBytes: 0,
    corruptBytes: 0,
  };
  #call: number;
  #template: Buffer | null;
  readonly #frameBytes: number;
  #partial: Buffer | null = null;
  #nextSeq = 0;
  readonly #missing = new Set<number>();

  /** `call` -1: the call is learnt from the first intact frame (an agent learns which call it serves). */
  constructor(
    private readonly magic: number,
    call: number,
    frameBytes = FRAME_BYTES,
  ) {
    this.#call = call;
    this.#frameBytes = frameBytes;
    this.#template = call >= 0 ? frameTemplate(call, frameBytes) : null;
  }

  get call(): number {
    return this.#call;
  }

  /** Bytes of an incomplete frame held at the end: lost if nothing completes it. */
  get pendingBytes(): number {
    return this.#partial?.length ?? 0;
  }

  push(chunk: Buffer, onFrame: FrameSink): void {
    const data = this.#partial ? Buffer.concat([this.#partial, chunk]) : chunk;
    this.#partial = null;
    const frameBytes = this.#frameBytes;
    let offset = 0;
    while (data.length - offset >= frameBytes) {
      if (this.#intact(data, offset)) {
        this.#accept(
          data.readUInt32BE(offset + 6),
          data.readDoubleLE(offset + 10),
          data[offset + 18]!,
          onFrame,
        );
        offset += frameBytes;
      } else {
        // Resynchronise byte by byte: a frame that lost a byte leaves the rest of the stream shifted.
        this.tally.corruptBytes += 1;
        offset += 1;
      }
    }
    if (offset < data.length) this.#partial = Buffer.from(data.subarray(offset));
  }

  #intact(data: Buffer, offset: number): boolean {
    const frameBytes = this.#frameBytes;
    const call = frameCall(data, offset, this.magic, frameBytes);
    if (call < 0) return false;
    if (this.#template === null) {
      this.#call = call;
      this.#template = frameTemplate(call, frameBytes);
    } else if (call !== this.#call) {
      return false;
    }
    const filler = offset + HEADER_BYTES;
    return data.compare(this.#template, HEADER_BYTES, frameBytes, filler, offset + frameBytes) === 0;
  }

  #accept(seq: number, sentAtMs: number, flags: number, onFrame: FrameSink): void {
    const { tally } = this;
    const frameBytes = this.#frameBytes;
    if (seq === this.#nextSeq) {
      tally.inOrderBytes += frameBytes;
      this.#nextSeq++;
    } else if (seq > this.#nextSeq) {
      for (let s = this.#nextSeq; s < seq && this.#missing.size < MAX_MISSING; s++) this.#missing.add(s);
      tally.inOrderBytes += frameBytes;
      this.#nextSeq = seq + 1;
    } else if (this.#missing.delete(seq)) {
      tally.reorderedBytes += frameBytes;
    } else {
      tally.duplicateBytes += frameBytes;
      return;
    }
    onFrame(seq, sentAtMs, flags);
  }
}
