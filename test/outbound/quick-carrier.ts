// A fake carrier on real time for tests against a running server: calls go as the simulated
// callee's number plan says, sped up (a 20 s call takes 20 ms by default), and their outcomes come
// back to the server's dialer as status callbacks would.
import type { Dialer } from '../../src/outbound/dialer.js';
import type { CarrierCallStatus, Originator, OriginateRequest } from '../../src/outbound/ports.js';
import type { AttemptOutcome } from '../../src/store/campaign-records.js';
import { answeredBy, calleeFor, expectedOutcome } from '../../src/sim/callee/plan.js';

export class QuickCarrier implements Originator {
  dialer: Dialer | null = null;
  readonly dials: OriginateRequest[] = [];
  readonly hangups: string[] = [];
  /** Called for each answered call with the verdict detection would give (the call session counts it). */
  onVerdict: ((verdict: string) => void) | null = null;
  private readonly live = new Map<string, NodeJS.Timeout>();
  private readonly ended = new Map<string, AttemptOutcome>();
  private readonly attempts = new Map<string, number>();
  private serial = 0;

  constructor(private readonly speedup = 1_000) {}

  async originate(request: OriginateRequest): Promise<{ callSid: string }> {
    this.dials.push(request);
    const attempt = (this.attempts.get(request.to) ?? 0) + 1;
    this.attempts.set(request.to, attempt);
    const callee = calleeFor(request.to, attempt);
    const outcome = expectedOutcome(callee, request.amd?.mode ?? 'off');
    const callSid = `CAquick${String(++this.serial).padStart(6, '0')}`;
    const timer = setTimeout(
      () => {
        this.live.delete(callSid);
        this.ended.set(callSid, outcome);
        if (callee.verdict !== null && request.amd) this.onVerdict?.(callee.verdict);
        void this.dialer?.attemptFinished({ callSid }, outcome, {
          durationMs: callee.verdict === null ? 0 : callee.answeredMs,
          answeredBy: answeredBy(callee),
          summary: callee.verdict === null ? null : `spoke with the ${callee.kind} callee`,
        });
      },
      (callee.ringMs + callee.answeredMs) / this.speedup,
    );
    this.live.set(callSid, timer);
    return { callSid };
  }

  async status(callSid: string): Promise<CarrierCallStatus> {
    if (this.live.has(callSid)) return { state: 'live' };
    const outcome = this.ended.get(callSid);
    return outcome ? { state: 'ended', outcome } : { state: 'unknown' };
  }

  async hangup(callSid: string): Promise<void> {
    this.hangups.push(callSid);
    const timer = this.live.get(callSid);
    if (!timer) return;
    clearTimeout(timer);
    this.live.delete(callSid);
    this.ended.set(callSid, 'cancelled');
    void this.dialer?.attemptFinished({ callSid }, 'cancelled');
  }

  close(): void {
    for (const timer of this.live.values()) clearTimeout(timer);
    this.live.clear();
  }
}
