// The two channels of a recording between the file and the present, held as the WAV holds them:
// 16-bit samples, left and right in turn, each placed at its position on the call's clock. Nothing
// placed is silence. Taking a stretch out is then one copy of memory, with no loop over samples,
// because the layout already is the file's. It holds only what lies ahead of the written part, so
// its size follows how far ahead audio is placed (a reply sent before it plays), not the length of
// the call.

export type Channel = 0 | 1;
export const LEFT: Channel = 0;
export const RIGHT: Channel = 1;

export class StereoBuffer {
  /** Sample pair `i` (at `2i` and `2i + 1`) sits at position `#base + i`. */
  #frames: Int16Array;
  #base = 0;
  /** Per channel, one past the last position holding audio. */
  readonly #end = [0, 0];

  constructor(
    /** Positions beyond `base + maxAhead` are not kept (bounded memory). */
    readonly maxAhead: number,
    initialCapacity = 4096,
  ) {
    this.#frames = new Int16Array(2 * Math.min(initialCapacity, maxAhead));
  }

  /** The first position not yet taken out. */
  get base(): number {
    return this.#base;
  }

  /**
   * Places 16-bit little-endian PCM bytes on `channel` from `position` on, clipped to what is not
   * yet taken and to `maxAhead` (what lies further ahead is dropped). A last odd byte is ignored.
   */
  putLinear16(channel: Channel, position: number, bytes: Uint8Array): void {
    const from = this.#from(position);
    const to = this.#to(position, bytes.length >> 1);
    if (to <= from) return;
    const frames = this.#frames;
    // `<< 16 >> 16` sign-extends the 16-bit value.
    for (let i = from, at = 2 * (position - this.#base + from) + channel; i < to; i++, at += 2) {
      frames[at] = (((bytes[2 * i + 1]! << 8) | bytes[2 * i]!) << 16) >> 16;
    }
    this.#placed(channel, position + to);
  }

  /**
   * Places G.711 bytes on `channel` from `position` on, each decoded through `table` (its 256
   * samples), with no intermediate array: this runs for every frame of a recorded call. Clipped
   * as `putLinear16` is.
   */
  putBytes(channel: Channel, position: number, bytes: Uint8Array, table: Int16Array): void {
    const from = this.#from(position);
    const to = this.#to(position, bytes.length);
    if (to <= from) return;
    const frames = this.#frames;
    for (let i = from, at = 2 * (position - this.#base + from) + channel; i < to; i++, at += 2) {
      frames[at] = table[bytes[i]!]!;
    }
    this.#placed(channel, position + to);
  }

  /** Silences `channel` from `position` on (audio the caller will not hear after all). */
  cut(channel: Channel, position: number): void {
    const at = Math.max(position, this.#base);
    const end = this.#end[channel]!;
    if (at >= end) return;
    const frames = this.#frames;
    const stop = 2 * (end - this.#base);
    for (let i = 2 * (at - this.#base) + channel; i < stop; i += 2) frames[i] = 0;
    this.#end[channel] = at;
  }

  /**
   * Copies positions `[base, upTo)` into `into` (2 samples a position, silence where nothing was
   * placed) and moves past them.
   */
  take(upTo: number, into: Int16Array): void {
    const count = upTo - this.#base;
    if (count <= 0) return;
    const frames = this.#frames;
    const held = Math.min(2 * count, frames.length);
    into.set(frames.subarray(0, held));
    if (held < 2 * count) into.fill(0, held, 2 * count);
    // Shift the rest down; what moves in from the end was never written, so is zero.
    frames.copyWithin(0, held);
    frames.fill(0, frames.length - held);
    this.#base = upTo;
  }

  /** The first of the samples placed from `position` that is not behind the taken part. */
  #from(position: number): number {
    return Math.max(0, this.#base - position);
  }

  /**
   * One past the last of `length` samples placed from `position` that lies within `maxAhead`,
   * with room made for it. Two numbers rather than a span object: this runs on every frame.
   */
  #to(position: number, length: number): number {
    const to = Math.min(length, this.#base + this.maxAhead - position);
    if (to > 0) this.#ensure(position - this.#base + to);
    return to;
  }

  #placed(channel: Channel, end: number): void {
    if (end > this.#end[channel]!) this.#end[channel] = end;
  }

  /** Room for `pairs` positions from `base`. */
  #ensure(pairs: number): void {
    const length = 2 * pairs;
    if (length <= this.#frames.length) return;
    let capacity = this.#frames.length || 2;
    while (capacity < length) capacity *= 2;
    const grown = new Int16Array(Math.min(capacity, 2 * this.maxAhead));
    grown.set(this.#frames);
    this.#frames = grown;
  }
}
