// Agent audio arrives in chunks of any size; the phone leg plays most smoothly when it receives
// whole 20 ms frames (docs/protocols/twilio.md: fixed 160-byte multiples avoid jitter), and some
// carriers take nothing shorter than a minimum (docs/protocols/exotel.md). The framer passes on
// the largest whole-frame prefix at once, once it reaches the minimum, and holds only the rest.

export class OutboundFramer {
  private remainder: Buffer | null = null;
  private readonly minBytes: number;

  /** `minBytes`: nothing shorter is passed on before `flush` (default one frame). */
  constructor(
    private readonly frameBytes: number,
    minBytes = frameBytes,
  ) {
    this.minBytes = Math.max(frameBytes, minBytes);
  }

  /** Returns the bytes to send now (a whole number of frames), or null while less is held. */
  push(chunk: Buffer): Buffer | null {
    const data = this.remainder ? Buffer.concat([this.remainder, chunk]) : chunk;
    const whole = data.length - (data.length % this.frameBytes);
    if (whole < this.minBytes) {
      // ws hands us a fresh buffer per message, so keeping a reference to it is safe.
      this.remainder = data.length > 0 ? data : null;
      return null;
    }
    this.remainder = whole === data.length ? null : data.subarray(whole);
    return whole === data.length ? data : data.subarray(0, whole);
  }

  /** What is held at the end of a reply (possibly a partial frame), so no byte is lost. */
  flush(): Buffer | null {
    const rest = this.remainder;
    this.remainder = null;
    return rest;
  }

  /** Drops what is held (barge-in: the rest of the reply must not play). */
  reset(): void {
    this.remainder = null;
  }
}
