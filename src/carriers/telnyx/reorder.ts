// Telnyx does not guarantee the order of media frames (docs/protocols/telnyx.md section 3): frames
// are put back in `sequence_number` order within a small window. A frame ahead of a missing one is
// held; held frames are released in order when the gap fills, or when more than `maxHeld` are
// waiting (the missing frame is then given up). Pure bookkeeping: no timers, one per stream.
//
// A number further from the expected one than `resyncFrames`, ahead or behind, is no reordering: the
// numbering itself jumped (a glitch, a restarted counter). The window resynchronises on it, releasing
// what it held, instead of taking every later frame for late and dropping the rest of the call.

export type ReorderOutcome =
  /** A frame that arrived ahead of a missing one and was held, then released in order. */
  | 'reordered'
  /** A frame that arrived after its place had been passed. */
  | 'late'
  | 'duplicate'
  /** A missing frame given up on when the window filled. */
  | 'gap'
  /** The numbering jumped: the window started over from the frame that showed it. */
  | 'resync';

/** 50 frames: a second of 20 ms audio, far beyond any reordering a network causes. */
const DEFAULT_RESYNC_FRAMES = 50;

export type ReorderResult<T> = { kind: 'due'; items: T[] } | { kind: 'late' } | { kind: 'duplicate' };

export class SequenceReorder<T> {
  private next: number | undefined;
  private readonly held = new Map<number, T>();

  constructor(
    private readonly maxHeld: number,
    private readonly count: (outcome: ReorderOutcome) => void,
    /** How far from the expected number a frame is a jump, not a reordering (default 1 s of 20 ms frames). */
    private readonly resyncFrames = DEFAULT_RESYNC_FRAMES,
  ) {}

  get heldCount(): number {
    return this.held.size;
  }

  push(sequence: number, item: T): ReorderResult<T> {
    if (this.next === undefined) this.next = sequence;
    if (Math.abs(sequence - this.next) > Math.max(this.resyncFrames, this.maxHeld)) {
      return this.resync(sequence, item);
    }
    if (sequence < this.next) {
      this.count('late');
      return { kind: 'late' };
    }
    if (this.held.has(sequence)) {
      this.count('duplicate');
      return { kind: 'duplicate' };
    }
    if (sequence > this.next) {
      this.held.set(sequence, item);
      if (this.held.size <= this.maxHeld) return { kind: 'due', items: [] };
      // The window is full: the missing frame is not coming in time.
      this.count('gap');
      this.next = this.lowestHeld();
      return { kind: 'due', items: this.releaseRun() };
    }
    this.next = sequence + 1;
    const items = [item];
    for (const released of this.releaseRun()) items.push(released);
    return { kind: 'due', items };
  }

  /** Everything held, in order (the stream is ending: nothing more will fill the gaps). */
  flush(): T[] {
    const sequences = [...this.held.keys()].sort((a, b) => a - b);
    const items: T[] = [];
    for (const sequence of sequences) {
      items.push(this.held.get(sequence)!);
      this.count('reordered');
      this.next = sequence + 1;
    }
    this.held.clear();
    return items;
  }

  /** Starts over at `sequence`: what was held comes first, in order, then this frame. */
  private resync(sequence: number, item: T): ReorderResult<T> {
    this.count('resync');
    const items = this.flush();
    items.push(item);
    this.next = sequence + 1;
    return { kind: 'due', items };
  }

  /** Held frames from `next` on, as long as they are consecutive. */
  private releaseRun(): T[] {
    const items: T[] = [];
    let next = this.next!;
    for (let item = this.held.get(next); item !== undefined; item = this.held.get(next)) {
      this.held.delete(next);
      items.push(item);
      this.count('reordered');
      next += 1;
    }
    this.next = next;
    return items;
  }

  private lowestHeld(): number {
    let lowest = Number.POSITIVE_INFINITY;
    for (const sequence of this.held.keys()) if (sequence < lowest) lowest = sequence;
    return lowest;
  }
}
