// The phone's speaker (docs/protocols/twilio.md section 5): server audio queues up and plays at 8000 bytes/s,
// one 20 ms frame per clock tick; a mark goes back once the audio queued before it has played;
// `clear` drops what has not played and releases every pending mark at once. What played is kept
// as "what the caller heard" (silence between replies is not part of it).

export const FRAME_BYTES = 160;

type QueueItem = { kind: 'audio'; data: Buffer } | { kind: 'mark'; name: string };

export interface PlayoutHooks {
  onMark(name: string, flushed: boolean): void;
  onStarted(): void;
  /** `playedBytes`: agent audio played since the matching onStarted. */
  onStopped(playedBytes: number): void;
}

export class PhonePlayout {
  private readonly queue: QueueItem[] = [];
  /** Read position inside the head audio item. */
  private headOffset = 0;
  private queuedBytes = 0;
  /** Marks passed by the frame now playing: they go back when that frame has finished. */
  private reachedMarks: string[] = [];
  private readonly played: Buffer[] = [];
  private playedTotal = 0;
  private playing = false;
  private stretchBytes = 0;
  private overflowBytes = 0;

  constructor(
    private readonly hooks: PlayoutHooks,
    /** Bound on queued audio; beyond it a real phone's buffer would drop too. */
    private readonly maxQueuedBytes = 10 * 60 * 8000,
  ) {}

  enqueueAudio(data: Buffer): void {
    if (data.length === 0) return;
    const room = this.maxQueuedBytes - this.queuedBytes;
    if (data.length > room) {
      this.overflowBytes += data.length - Math.max(0, room);
      if (room <= 0) return;
      data = data.subarray(0, room);
    }
    this.queue.push({ kind: 'audio', data });
    this.queuedBytes += data.length;
  }

  enqueueMark(name: string): void {
    if (this.queue.length > 0) {
      this.queue.push({ kind: 'mark', name });
    } else if (this.playing) {
      // Queued behind the frame now on the speaker: it is "played" when that frame ends.
      this.reachedMarks.push(name);
    } else {
      this.hooks.onMark(name, false);
    }
  }

  /** One 20 ms frame of playout time has begun: finish the last frame, start the next. Returns what it plays. */
  tick(): Buffer | null {
    this.releaseReachedMarks();
    const frame: Buffer[] = [];
    let wanted = FRAME_BYTES;
    while (wanted > 0 && this.queue.length > 0) {
      const head = this.queue[0]!;
      if (head.kind === 'mark') {
        this.reachedMarks.push(head.name);
        this.queue.shift();
        continue;
      }
      const take = Math.min(wanted, head.data.length - this.headOffset);
      frame.push(head.data.subarray(this.headOffset, this.headOffset + take));
      this.headOffset += take;
      wanted -= take;
      if (this.headOffset === head.data.length) {
        this.queue.shift();
        this.headOffset = 0;
      }
    }
    // Marks right behind the last audio taken are reached when this frame ends.
    while (this.queue[0]?.kind === 'mark') {
      this.reachedMarks.push((this.queue.shift() as { name: string }).name);
    }
    const bytes = FRAME_BYTES - wanted;
    if (bytes === 0) {
      this.stopIfPlaying();
      return null;
    }
    this.queuedBytes -= bytes;
    for (const part of frame) this.played.push(part);
    this.playedTotal += bytes;
    if (!this.playing) {
      this.playing = true;
      this.stretchBytes = 0;
      this.hooks.onStarted();
    }
    this.stretchBytes += bytes;
    return frame.length === 1 ? frame[0]! : Buffer.concat(frame, bytes);
  }

  /** Barge-in: unplayed audio is dropped and every pending mark goes back now. Returns bytes dropped. */
  clear(): number {
    const dropped = this.queuedBytes;
    const flushed = this.queue.filter((item) => item.kind === 'mark').map((item) => item.name);
    this.queue.length = 0;
    this.headOffset = 0;
    this.queuedBytes = 0;
    this.releaseReachedMarks();
    for (const name of flushed) this.hooks.onMark(name, true);
    this.stopIfPlaying();
    return dropped;
  }

  /** The call ended: nothing more plays. Returns the bytes left unplayed. */
  hangUp(): number {
    const unplayed = this.queuedBytes;
    this.queue.length = 0;
    this.headOffset = 0;
    this.queuedBytes = 0;
    this.reachedMarks = [];
    this.stopIfPlaying();
    return unplayed;
  }

  heard(): Buffer {
    return Buffer.concat(this.played, this.playedTotal);
  }

  /** Audio waiting to play (what a clear now would drop). */
  get queuedAudioBytes(): number {
    return this.queuedBytes;
  }

  get droppedOnOverflowBytes(): number {
    return this.overflowBytes;
  }

  private releaseReachedMarks(): void {
    const marks = this.reachedMarks;
    this.reachedMarks = [];
    for (const name of marks) this.hooks.onMark(name, false);
  }

  private stopIfPlaying(): void {
    if (!this.playing) return;
    this.playing = false;
    this.hooks.onStopped(this.stretchBytes);
  }
}
