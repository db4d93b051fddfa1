// A model of the carrier's playout buffer: audio we send plays at the stream's byte rate after
// whatever is still queued. It tells whether the caller is hearing the agent right now, which
// decides whether `UserStartedSpeaking` interrupted anything.

export class PlayoutClock {
  private endsAtMs = 0;

  constructor(private readonly bytesPerMs: number) {}

  /** Audio sent now; returns when it starts to play (after what is still queued). */
  queued(bytes: number, nowMs = performance.now()): number {
    const startsAtMs = Math.max(this.endsAtMs, nowMs);
    this.endsAtMs = startsAtMs + bytes / this.bytesPerMs;
    return startsAtMs;
  }

  /** Audio still queued at the carrier, by this model. */
  remainingMs(nowMs = performance.now()): number {
    return Math.max(0, this.endsAtMs - nowMs);
  }

  isPlaying(nowMs = performance.now()): boolean {
    return this.endsAtMs > nowMs;
  }

  clear(): void {
    this.endsAtMs = 0;
  }
}
