// What the simulated carrier API was asked to do, per call: every request in order, and what the
// simulated phone needs to learn from it (where to open the media stream, whether the call ended).
// Bounded: the oldest calls are forgotten first, and a call keeps its latest requests only.

export interface SimApiAction {
  /** The carrier's name for the request: `answer`, `hangup`, `transfer`, `create`, … */
  action: string;
  atMs: number;
  /** The request body as the server sent it (JSON, or a form read into an object). */
  body: unknown;
}

export interface SimCallRecord {
  carrier: string;
  callSid: string;
  /** The id the create request was answered with, where it is not the call's (Plivo `request_uuid`). */
  requestId?: string;
  createdAtMs: number;
  /** `ringing` until answered; `ended` once hung up, rejected or transferred away. */
  state: 'ringing' | 'answered' | 'ended';
  /** Where the carrier would open the media stream (Telnyx: the answer's `stream_url`). */
  streamUrl?: string;
  /** What the caller was told (Telnyx `speak`), in order. */
  spoken: string[];
  /** Where the call was transferred to, if it was. */
  transferredTo?: string;
  /** Outbound calls: the carrier's status word (`ringing`, `in-progress`, `busy`, …) and, once ended, the seconds it lasted. */
  status?: string;
  durationS?: number;
  requests: SimApiAction[];
}

interface Waiter {
  check(): void;
  done(): void;
}

export const MAX_SIM_CALLS = 1000;
export const MAX_SIM_REQUESTS_PER_CALL = 100;

export class SimCallLog {
  private readonly calls = new Map<string, SimCallRecord>();
  private readonly waiters = new Map<string, Set<Waiter>>();

  constructor(private readonly now: () => number = Date.now) {}

  get size(): number {
    return this.calls.size;
  }

  /** Waits now held open. */
  get waitCount(): number {
    let count = 0;
    for (const waiters of this.waiters.values()) count += waiters.size;
    return count;
  }

  get(callSid: string): SimCallRecord | undefined {
    return this.calls.get(callSid);
  }

  /** The call a create request made, by the id that request was answered with. */
  byRequestId(carrier: string, requestId: string): SimCallRecord | undefined {
    for (const call of this.calls.values()) {
      if (call.carrier === carrier && call.requestId === requestId) return call;
    }
    return undefined;
  }

  /** The call's record, created on the first request about it. */
  call(carrier: string, callSid: string): SimCallRecord {
    const known = this.calls.get(callSid);
    if (known !== undefined) return known;
    const record: SimCallRecord = {
      carrier,
      callSid,
      createdAtMs: this.now(),
      state: 'ringing',
      spoken: [],
      requests: [],
    };
    this.calls.set(callSid, record);
    if (this.calls.size > MAX_SIM_CALLS) {
      const oldest = this.calls.keys().next().value;
      if (oldest !== undefined) this.calls.delete(oldest);
    }
    return record;
  }

  /** Changes a call without a request (the simulated callee answered, hung up), then wakes whoever waits on it. */
  update(callSid: string, change: (call: SimCallRecord) => void): void {
    const call = this.calls.get(callSid);
    if (call === undefined) return;
    change(call);
    for (const waiter of [...(this.waiters.get(callSid) ?? [])]) waiter.check();
  }

  /** Records one request about a call, then wakes whoever waits on it. */
  record(
    carrier: string,
    callSid: string,
    action: string,
    body: unknown,
    update?: (call: SimCallRecord) => void,
  ): SimCallRecord {
    const call = this.call(carrier, callSid);
    call.requests.push({ action, atMs: this.now(), body });
    if (call.requests.length > MAX_SIM_REQUESTS_PER_CALL) call.requests.shift();
    update?.(call);
    for (const waiter of [...(this.waiters.get(callSid) ?? [])]) waiter.check();
    return call;
  }

  /** The most recent calls first. */
  list(limit: number): SimCallRecord[] {
    return [...this.calls.values()].reverse().slice(0, limit);
  }

  /** Resolves when `ready(record)` holds for the call, or with the record as it is after `timeoutMs`. */
  waitFor(
    callSid: string,
    ready: (call: SimCallRecord) => boolean,
    timeoutMs: number,
  ): Promise<SimCallRecord | undefined> {
    const now = this.calls.get(callSid);
    if (now !== undefined && ready(now)) return Promise.resolve(now);
    return new Promise((resolve) => {
      const waiters = this.waiters.get(callSid) ?? new Set<Waiter>();
      this.waiters.set(callSid, waiters);
      const waiter: Waiter = {
        check: () => {
          const call = this.calls.get(callSid);
          if (call !== undefined && ready(call)) waiter.done();
        },
        done: () => {
          clearTimeout(timer);
          waiters.delete(waiter);
          if (waiters.size === 0) this.waiters.delete(callSid);
          resolve(this.calls.get(callSid));
        },
      };
      const timer = setTimeout(waiter.done, timeoutMs);
      waiters.add(waiter);
    });
  }

  /** Ends every wait at once, with the records as they are (the server is closing). */
  endWaits(): void {
    for (const waiters of [...this.waiters.values()]) for (const waiter of [...waiters]) waiter.done();
  }
}
