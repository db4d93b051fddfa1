// When the simulated caller starts talking. A person who calls a business waits for the greeting:
// they listen until the agent's first words have played and the line has gone quiet, and speak up
// anyway when no greeting comes or it runs on. Decided on stream time (frames played), never on the
// wall clock, so a busy event loop does not change the outcome.

export interface GreetingWaitLimits {
  /** Quiet after the greeting's audio that tells the caller it is their turn. */
  idleAfterGreetingMs: number;
  /** The caller speaks up when no agent audio has started by then. */
  noGreetingMs: number;
  /** The caller speaks up by then whatever is playing. */
  maxWaitMs: number;
}

export const DEFAULT_GREETING_WAIT: Readonly<GreetingWaitLimits> = Object.freeze({
  idleAfterGreetingMs: 300,
  noGreetingMs: 5000,
  maxWaitMs: 15_000,
});

/** Why the caller started speaking when they did. */
export type SpeakReason = 'greeting-ended' | 'no-greeting' | 'wait-capped' | 'no-wait';

export class GreetingWait {
  private readonly limits: GreetingWaitLimits;
  private firstAudioAtMs: number | undefined;
  private playing = false;
  private quietSinceMs = 0;

  constructor(limits: Partial<GreetingWaitLimits> = {}) {
    this.limits = { ...DEFAULT_GREETING_WAIT, ...limits };
  }

  agentAudioStarted(atMs: number): void {
    this.firstAudioAtMs ??= atMs;
    this.playing = true;
  }

  agentAudioStopped(atMs: number): void {
    this.playing = false;
    this.quietSinceMs = atMs;
  }

  /** The reason to start speaking at `nowMs` of stream time, or undefined to keep listening. */
  decide(nowMs: number): SpeakReason | undefined {
    const { idleAfterGreetingMs, noGreetingMs, maxWaitMs } = this.limits;
    if (nowMs >= maxWaitMs) return 'wait-capped';
    if (this.firstAudioAtMs === undefined) return nowMs >= noGreetingMs ? 'no-greeting' : undefined;
    if (!this.playing && nowMs - this.quietSinceMs >= idleAfterGreetingMs) return 'greeting-ended';
    return undefined;
  }
}
