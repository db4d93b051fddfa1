// Agent audio arrives in chunks of any size; the phone leg plays most smoothly when it receives
// whole 20 ms frames (PROTOCOLS.md section 2: fixed 160-byte multiples avoid jitter). The framer
// passes on the largest whole-frame prefix at once and holds only the remainder.

export class OutboundFramer {
  private remainder: Buffer | null = null;

  constructor(private readonly frameBytes: number) {}

  /** Returns the bytes to send now (a whole number of frames), or null when less than a frame is held. */
  push(chunk: Buffer): Buffer | null {
    const data = this.remainder ? Buffer.concat([this.remainder, chunk]) : chunk;
    const whole = data.length - (data.length % this.frameBytes);
    this.remainder = whole === data.length ? null : data.subarray(whole);
    // The agent may reuse nothing we hold, but ws hands us a fresh buffer per message, so a
    // subarray of it is safe to keep.
    return whole === 0 ? null : whole === data.length ? data : data.subarray(0, whole);
  }

  /** The held partial frame at the end of a reply, sent as is so no byte is lost. */
  flush(): Buffer | null {
    const rest = this.remainder;
    this.remainder = null;
    return rest;
  }

  /** Drops the held partial frame (barge-in: the rest of the reply must not play). */
  reset(): void {
    this.remainder = null;
  }
}
