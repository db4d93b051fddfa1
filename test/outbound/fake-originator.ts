// A fake carrier REST for the dialer: it places calls that end as a script says (by default the
// simulated callee's number plan), posts the outcome back as a status callback would, answers
// status queries and hang-ups, and keeps what happened for the test to check.
import type { AttemptDetails } from '../../src/store/campaign-store.js';
import type { Dialer } from '../../src/outbound/dialer.js';
import type { CarrierCallStatus, Originator, OriginateRequest } from '../../src/outbound/ports.js';
import type { AnsweredBy, AttemptOutcome } from '../../src/store/campaign-records.js';
import { answeredBy, calleeFor, expectedOutcome } from '../../src/sim/callee/plan.js';
import type { FakeClock } from './fake-clock.js';

/**
 * How one call goes: it ends after `afterMs` with `outcome`; or the request fails; or the carrier
 * never answers the request, which times out after NO_REPLY_TIMEOUT_MS with no status.
 */
export type CallScript =
  | { outcome: AttemptOutcome; afterMs: number; durationMs?: number; answeredBy?: AnsweredBy | null }
  | { error: { retryable: boolean; status?: number; code?: string } }
  | 'no_reply';

export const NO_REPLY_TIMEOUT_MS = 10_000;

export interface Dial {
  to: string;
  from: string | null;
  atMs: number;
  callSid: string | null;
  request: OriginateRequest;
}

export class FakeOriginator implements Originator {
  readonly dials: Dial[] = [];
  readonly hangups: string[] = [];
  readonly statusQueries: string[] = [];
  /** Where status callbacks go; null drops them (the server is down). */
  sink: Pick<Dialer, 'attemptFinished'> | null = null;
  maxLive = 0;
  private readonly live = new Map<string, { request: OriginateRequest; end: () => void }>();
  private readonly ended = new Map<string, CarrierCallStatus>();
  private readonly pending = new Set<Promise<unknown>>();
  private serial = 0;
  private readonly attemptsTo = new Map<string, number>();

  constructor(
    private readonly clock: FakeClock,
    private readonly script: (request: OriginateRequest, attempt: number) => CallScript = planScript,
  ) {}

  get liveCount(): number {
    return this.live.size;
  }

  /** Waits for the callbacks in flight. */
  async settle(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  dialsTo(number: string): Dial[] {
    return this.dials.filter((d) => d.to === number);
  }

  async originate(request: OriginateRequest): Promise<{ callSid: string }> {
    const attempt = (this.attemptsTo.get(request.to) ?? 0) + 1;
    this.attemptsTo.set(request.to, attempt);
    const dial: Dial = { to: request.to, from: request.from, atMs: this.clock.now(), callSid: null, request };
    this.dials.push(dial);
    const script = this.script(request, attempt);
    if (script === 'no_reply') {
      return new Promise((_, reject) => {
        this.clock.setTimeout(
          () =>
            reject(
              Object.assign(new Error('timed out'), { code: 'CALLBRIDGE_CARRIER_API', retryable: true }),
            ),
          NO_REPLY_TIMEOUT_MS,
        );
      });
    }
    if ('error' in script) {
      throw Object.assign(new Error('carrier refused'), { code: 'CALLBRIDGE_CARRIER_API', ...script.error });
    }
    const callSid = `CA${String(++this.serial).padStart(6, '0')}`;
    dial.callSid = callSid;
    let handle: unknown = null;
    const end = (outcome: AttemptOutcome, details: AttemptDetails) => {
      if (!this.live.delete(callSid)) return;
      this.clock.clearTimeout(handle);
      this.ended.set(callSid, {
        state: 'ended',
        outcome,
        ...(details.durationMs == null ? {} : { durationMs: details.durationMs }),
        ...(details.answeredBy == null ? {} : { answeredBy: details.answeredBy }),
      });
      const sink = this.sink;
      if (sink) this.track(sink.attemptFinished({ callSid }, outcome, details));
    };
    this.live.set(callSid, {
      request,
      end: () => end('cancelled', { reason: 'hung up' }),
    });
    this.maxLive = Math.max(this.maxLive, this.live.size);
    handle = this.clock.setTimeout(
      () =>
        end(script.outcome, {
          durationMs: script.durationMs ?? 0,
          answeredBy: script.answeredBy ?? null,
        }),
      script.afterMs,
    );
    return { callSid };
  }

  async status(callSid: string): Promise<CarrierCallStatus> {
    this.statusQueries.push(callSid);
    if (this.live.has(callSid)) return { state: 'live' };
    return this.ended.get(callSid) ?? { state: 'unknown' };
  }

  async hangup(callSid: string): Promise<void> {
    this.hangups.push(callSid);
    this.live.get(callSid)?.end();
  }

  private track(work: Promise<unknown>) {
    this.pending.add(work);
    work.finally(() => this.pending.delete(work)).catch(() => {});
  }
}

/** The simulated callee's number plan, with the campaign's detection mode. */
export function planScript(request: OriginateRequest, attempt: number): CallScript {
  const callee = calleeFor(request.to, attempt);
  const outcome = expectedOutcome(callee, request.amd?.mode ?? 'off');
  const answered = callee.verdict !== null;
  return {
    outcome,
    afterMs: callee.ringMs + callee.answeredMs,
    durationMs: answered ? callee.answeredMs : 0,
    answeredBy: answeredBy(callee),
  };
}
