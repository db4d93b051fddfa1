// The two channels of a recording between the file and the present, each held as the stream
// carries it (G.711 bytes, or 16-bit little-endian PCM) at its position on the call's clock.
// Placing a frame is then one copy of memory; decoding to the WAV's 16-bit samples and
// interleaving the channels happen once per write, in one pass over the stretch written, and the
// right channel (what the caller heard) is decoded only where audio was placed on it. Nothing
// placed is the stream's silence. It holds only what lies ahead of the written part, so its size
// follows how far ahead audio is placed (a reply sent before it plays), not the length of the call.
import { endianness } from 'node:os';
import { type AudioEncoding, silenceByte } from '../audio/format.js';

export type Channel = 0 | 1;
export const LEFT: Channel = 0;
export const RIGHT: Channel = 1;

/** WAV is little-endian; a sample pair is built as one 32-bit value in this machine's order. */
const LITTLE_ENDIAN = endianness() === 'LE';

/** A G.711 table as the halves of a 32-bit sample pair: left in the low half, right in the high. */
interface PairTables {
  low: Uint32Array;
  high: Uint32Array;
}

const pairTables = new WeakMap<Int16Array, PairTables>();

function pairTablesOf(table: Int16Array): PairTables {
  let tables = pairTables.get(table);
  if (tables === undefined) {
    tables = {
      low: Uint32Array.from(table, (sample) => sample & 0xffff),
      high: Uint32Array.from(table, (sample) => (sample << 16) >>> 0),
    };
    pairTables.set(table, tables);
  }
  return tables;
}

export class StereoBuffer {
  /** Bytes of one sample as the stream carries it. */
  readonly #width: 1 | 2;
  readonly #silence: number;
  /** G.711's samples as pair halves; null for 16-bit PCM. */
  readonly #tables: PairTables | null;
  /** Per channel, the stream's bytes of positions `#base` on. */
  #bytes: [Uint8Array, Uint8Array];
  #base = 0;
  /** Per channel, one past the last position holding audio. */
  readonly #end = [0, 0];
  /** The first position audio was placed at on the right since the last take. */
  #rightFrom = Infinity;

  constructor(
    encoding: AudioEncoding,
    /** G.711's decoding table (its 256 samples); null for 16-bit PCM. */
    table: Int16Array | null,
    /** Positions beyond `base + maxAhead` are not kept (bounded memory). */
    readonly maxAhead: number,
    initialCapacity = 4096,
  ) {
    this.#width = table === null ? 2 : 1;
    this.#tables = table === null ? null : pairTablesOf(table);
    this.#silence = silenceByte(encoding);
    const size = this.#width * Math.min(initialCapacity, maxAhead);
    this.#bytes = [this.#blank(size), this.#blank(size)];
  }

  /** The first position not yet taken out. */
  get base(): number {
    return this.#base;
  }

  /**
   * Places the stream's bytes on `channel` from `position` on, clipped to what is not yet taken
   * and to `maxAhead` (what lies further ahead is dropped). A last partial sample is ignored.
   */
  put(channel: Channel, position: number, bytes: Uint8Array): void {
    const width = this.#width;
    const from = Math.max(0, this.#base - position);
    const to = Math.min(Math.floor(bytes.length / width), this.#base + this.maxAhead - position);
    if (to <= from) return;
    const end = position + to;
    this.#ensure(end - this.#base);
    this.#bytes[channel].set(
      bytes.subarray(from * width, to * width),
      (position + from - this.#base) * width,
    );
    if (end > this.#end[channel]!) this.#end[channel] = end;
    if (channel === RIGHT && position + from < this.#rightFrom) this.#rightFrom = position + from;
  }

  /** Silences `channel` from `position` on (audio the caller will not hear after all). */
  cut(channel: Channel, position: number): void {
    const at = Math.max(position, this.#base);
    const end = this.#end[channel]!;
    if (at >= end) return;
    const width = this.#width;
    this.#bytes[channel].fill(this.#silence, (at - this.#base) * width, (end - this.#base) * width);
    this.#end[channel] = at;
  }

  /**
   * Writes positions `[base, upTo)` into `into` as the WAV's data (16-bit little-endian samples,
   * left and right in turn; silence where nothing was placed) and moves past them. `into` must be
   * 4-byte aligned (memory of its own, not a slice of Buffer's shared pool).
   */
  take(upTo: number, into: Int16Array): void {
    const count = upTo - this.#base;
    if (count <= 0) return;
    const width = this.#width;
    const [left, right] = this.#bytes;
    const held = Math.min(count, left.length / width);
    // Where the right channel holds audio; elsewhere in the stretch it is silence.
    const rightFrom = Math.min(Math.max(0, this.#rightFrom - this.#base), held);
    const rightTo = Math.min(Math.max(0, this.#end[RIGHT]! - this.#base), held);
    const tables = this.#tables;
    if (tables !== null) {
      const { low, high } = tables;
      const pairs = new Uint32Array(into.buffer, into.byteOffset, held);
      const silentRight = high[this.#silence]!;
      for (let i = 0; i < rightFrom; i++) pairs[i] = low[left[i]!]! | silentRight;
      for (let i = rightFrom; i < rightTo; i++) pairs[i] = low[left[i]!]! | high[right[i]!]!;
      for (let i = Math.max(rightFrom, rightTo); i < held; i++) pairs[i] = low[left[i]!]! | silentRight;
      if (!LITTLE_ENDIAN) Buffer.from(into.buffer, into.byteOffset, 4 * held).swap32();
    } else {
      // The stream's PCM is little-endian, as the file's is: samples are moved as they are.
      const left16 = new Uint16Array(left.buffer, left.byteOffset, held);
      const right16 = new Uint16Array(right.buffer, right.byteOffset, held);
      const into16 = new Uint16Array(into.buffer, into.byteOffset, 2 * held);
      for (let i = 0; i < held; i++) {
        into16[2 * i] = left16[i]!;
        into16[2 * i + 1] = i >= rightFrom && i < rightTo ? right16[i]! : 0;
      }
    }
    if (held < count) into.fill(0, 2 * held, 2 * count);
    // Shift the rest down; what moves in from the end was never placed, so is silence.
    for (const bytes of this.#bytes) {
      bytes.copyWithin(0, held * width);
      bytes.fill(this.#silence, bytes.length - held * width);
    }
    this.#base = upTo;
    this.#rightFrom = this.#end[RIGHT]! > upTo ? upTo : Infinity;
  }

  /** Room for `positions` positions from `base`. */
  #ensure(positions: number): void {
    const width = this.#width;
    if (positions * width <= this.#bytes[0].length) return;
    let capacity = this.#bytes[0].length / width || 1;
    while (capacity < positions) capacity *= 2;
    const size = width * Math.min(capacity, this.maxAhead);
    this.#bytes = this.#bytes.map((old) => {
      const grown = this.#blank(size);
      grown.set(old);
      return grown;
    }) as [Uint8Array, Uint8Array];
  }

  /** Silence of `size` bytes, in memory of its own (aligned for the 16-bit views of `take`). */
  #blank(size: number): Uint8Array {
    return new Uint8Array(size).fill(this.#silence);
  }
}
