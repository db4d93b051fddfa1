// A model of the carrier's playout buffer: audio we send plays at the stream's byte rate after
// whatever is still queued. It tells whether the caller is hearing the agent right now, which
// decides whether `UserStartedSpeaking` interrupted anything.

export class PlayoutClock {
  private endsAtMs = 0;

  constructor(private readonly bytesPerMs: number) {}

  queued(bytes: number, nowMs = performance.now()): void {
    this.endsAtMs = Math.max(this.endsAtMs, nowMs) + bytes / this.bytesPerMs;
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
