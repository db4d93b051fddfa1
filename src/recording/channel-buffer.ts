// One channel of a recording between the file and the present: samples placed at their position
// on the call's clock, read out in order once that stretch of time is written. Nothing placed is
// silence. It holds only what lies ahead of the written part, so its size follows how far ahead
// audio is placed (a reply sent before it plays), not the length of the call.

export class ChannelBuffer {
  /** Sample `#samples[0]` sits at position `#base`. */
  #samples: Int16Array;
  #base = 0;
  /** One past the last position holding audio. */
  #end = 0;

  constructor(
    /** Positions beyond `base + maxAhead` are not kept (bounded memory). */
    readonly maxAhead: number,
    initialCapacity = 4096,
  ) {
    this.#samples = new Int16Array(Math.min(initialCapacity, maxAhead));
  }

  /** The first position not yet taken out. */
  get base(): number {
    return this.#base;
  }

  /** One past the last position holding audio (at least `base`). */
  get end(): number {
    return Math.max(this.#end, this.#base);
  }

  /**
   * Places `samples` from `position` on (clipped to what is not yet taken and to `maxAhead`).
   * Returns how many samples were dropped for lying too far ahead.
   */
  put(position: number, samples: Int16Array): number {
    let from = 0;
    let at = position;
    if (at < this.#base) {
      from = this.#base - at;
      at = this.#base;
    }
    const limit = this.#base + this.maxAhead;
    const to = Math.min(samples.length, from + Math.max(0, limit - at));
    if (to <= from) return samples.length - from;
    const offset = at - this.#base;
    this.#ensure(offset + (to - from));
    this.#samples.set(samples.subarray(from, to), offset);
    this.#end = Math.max(this.#end, at + (to - from));
    return samples.length - to;
  }

  /**
   * Places G.711 bytes from `position` on, each decoded through `table` (its 256 samples), without
   * an intermediate array: this runs for every frame of a recorded call. Same clipping as `put`.
   */
  putBytes(position: number, bytes: Uint8Array, table: Int16Array): number {
    let from = 0;
    let at = position;
    if (at < this.#base) {
      from = this.#base - at;
      at = this.#base;
    }
    const limit = this.#base + this.maxAhead;
    const to = Math.min(bytes.length, from + Math.max(0, limit - at));
    if (to <= from) return bytes.length - from;
    const offset = at - this.#base - from;
    this.#ensure(offset + to);
    const samples = this.#samples;
    for (let i = from; i < to; i++) samples[offset + i] = table[bytes[i]!]!;
    this.#end = Math.max(this.#end, at + (to - from));
    return bytes.length - to;
  }

  /** Silences everything from `position` on (audio the caller will not hear after all). */
  cut(position: number): void {
    const at = Math.max(position, this.#base);
    if (at >= this.#end) return;
    this.#samples.fill(0, at - this.#base, this.#end - this.#base);
    this.#end = at;
  }

  /** Copies positions `[base, upTo)` into `into` (silence where nothing was placed) and moves past them. */
  take(upTo: number, into: Int16Array): void {
    const count = upTo - this.#base;
    if (count <= 0) return;
    const held = Math.min(count, this.#samples.length);
    into.set(this.#samples.subarray(0, held));
    if (held < count) into.fill(0, held, count);
    // Shift the rest down; what moves in from the end was never written, so is zero.
    this.#samples.copyWithin(0, held);
    this.#samples.fill(0, this.#samples.length - held);
    this.#base = upTo;
  }

  #ensure(length: number): void {
    if (length <= this.#samples.length) return;
    let capacity = this.#samples.length || 1;
    while (capacity < length) capacity *= 2;
    const grown = new Int16Array(Math.min(capacity, this.maxAhead));
    grown.set(this.#samples);
    this.#samples = grown;
  }
}
