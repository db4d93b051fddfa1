// Audio that identifies itself, so loss, order and latency are measured end to end from the bytes
// alone. Every 20 ms frame (160 bytes of μ-law, docs/protocols/twilio.md section 3) carries a header and a
// filler pattern fixed per call:
//
//   0-1 magic (direction) · 2-5 call index · 6-9 sequence number in the call's direction ·
//   10-17 wall-clock send time in ms (float64) · 18 flags · 19-159 filler
//
// Both ends run on one machine, where `performance.timeOrigin + performance.now()` is one clock to
// well under a millisecond once each process's offset from the orchestrator is taken out (measured
// at start, see `setClockOffsetMs`), so the receiver subtracts the embedded send time from its own
// clock. The filler bytes alternate between loud μ-law codes, so a
// speech detector on the path hears a caller who keeps talking and never starts a silence timer.

export const FRAME_BYTES = 160;
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

/** The 160-byte frame of `call` with its filler in place and an empty header. */
export function frameTemplate(call: number): Buffer {
  const frame = Buffer.alloc(FRAME_BYTES);
  for (let i = HEADER_BYTES; i < FRAME_BYTES; i++) {
    // μ-law codes 0x00-0x1f and 0x80-0x9f are the loudest of each sign.
    frame[i] = (i & 1 ? 0x80 : 0x00) | ((call * 7 + i * 13) & 0x1f);
  }
  return frame;
}

/** Writes a frame at `offset` of `target`: the template's filler and the header. */
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
  template.copy(target, offset + HEADER_BYTES, HEADER_BYTES, FRAME_BYTES);
  target.writeUInt16BE(magic, offset);
  target.writeUInt32BE(call, offset + 2);
  target.writeUInt32BE(seq, offset + 6);
  target.writeDoubleLE(sentAtMs, offset + 10);
  target[offset + 18] = flags;
}

/** Reads the call index of a frame, or -1 when the bytes at `offset` are not a frame of `magic`. */
export function frameCall(data: Buffer, offset: number, magic: number): number {
  if (offset + FRAME_BYTES > data.length || data.readUInt16BE(offset) !== magic) return -1;
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
  #partial: Buffer | null = null;
  #nextSeq = 0;
  readonly #missing = new Set<number>();

  /** `call` -1: the call is learnt from the first intact frame (an agent learns which call it serves). */
  constructor(
    private readonly magic: number,
    call: number,
  ) {
    this.#call = call;
    this.#template = call >= 0 ? frameTemplate(call) : null;
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
    let offset = 0;
    while (data.length - offset >= FRAME_BYTES) {
      if (this.#intact(data, offset)) {
        this.#accept(
          data.readUInt32BE(offset + 6),
          data.readDoubleLE(offset + 10),
          data[offset + 18]!,
          onFrame,
        );
        offset += FRAME_BYTES;
      } else {
        // Resynchronise byte by byte: a frame that lost a byte leaves the rest of the stream shifted.
        this.tally.corruptBytes += 1;
        offset += 1;
      }
    }
    if (offset < data.length) this.#partial = Buffer.from(data.subarray(offset));
  }

  #intact(data: Buffer, offset: number): boolean {
    const call = frameCall(data, offset, this.magic);
    if (call < 0) return false;
    if (this.#template === null) {
      this.#call = call;
      this.#template = frameTemplate(call);
    } else if (call !== this.#call) {
      return false;
    }
    const filler = offset + HEADER_BYTES;
    return data.compare(this.#template, HEADER_BYTES, FRAME_BYTES, filler, offset + FRAME_BYTES) === 0;
  }

  #accept(seq: number, sentAtMs: number, flags: number, onFrame: FrameSink): void {
    const { tally } = this;
    if (seq === this.#nextSeq) {
      tally.inOrderBytes += FRAME_BYTES;
      this.#nextSeq++;
    } else if (seq > this.#nextSeq) {
      for (let s = this.#nextSeq; s < seq && this.#missing.size < MAX_MISSING; s++) this.#missing.add(s);
      tally.inOrderBytes += FRAME_BYTES;
      this.#nextSeq = seq + 1;
    } else if (this.#missing.delete(seq)) {
      tally.reorderedBytes += FRAME_BYTES;
    } else {
      tally.duplicateBytes += FRAME_BYTES;
      return;
    }
    onFrame(seq, sentAtMs, flags);
  }
}
