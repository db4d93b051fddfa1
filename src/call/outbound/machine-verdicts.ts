// Answering-machine verdicts on their way to their call. A carrier posts a verdict to a webhook,
// which may come before the call's media stream has started here (the session does not exist yet):
// such a verdict waits, briefly and bounded, for the session to take it when it starts.
import type { VerdictReport } from './amd-gate.js';
import type { CallRegistry } from '../watch/registry.js';

/** A verdict with no session after this long belongs to a call whose stream never came. */
const PENDING_TTL_MS = 60_000;
const MAX_PENDING = 10_000;

interface Pending {
  report: VerdictReport;
  atMs: number;
}

export class MachineVerdicts {
  readonly #pending = new Map<string, Pending>();

  constructor(
    private readonly registry: CallRegistry,
    private readonly now: () => number = Date.now,
  ) {}

  /** Hands the verdict to the call's session, or keeps it until the session starts. */
  deliver(carrier: string, callSid: string, report: VerdictReport): 'delivered' | 'pending' {
    const session = this.registry.get(callSid);
    if (session && session.info.carrier === carrier) {
      session.onMachineVerdict(report);
      return 'delivered';
    }
    this.#sweep();
    const key = `${carrier}:${callSid}`;
    const known = this.#pending.get(key);
    // A `machine_start` followed by the end of the greeting: the later one completes it.
    if (!known || known.report.verdict !== 'machine' || report.messageEnded) {
      this.#pending.set(key, { report, atMs: this.now() });
    }
    return 'pending';
  }

  /** The verdict that came before the call's stream, if one did. */
  take(carrier: string, callSid: string): VerdictReport | null {
    const key = `${carrier}:${callSid}`;
    const pending = this.#pending.get(key);
    this.#pending.delete(key);
    if (!pending || this.now() - pending.atMs > PENDING_TTL_MS) return null;
    return pending.report;
  }

  get size(): number {
    return this.#pending.size;
  }

  #sweep(): void {
    const now = this.now();
    for (const [key, pending] of this.#pending) {
      if (now - pending.atMs <= PENDING_TTL_MS && this.#pending.size < MAX_PENDING) break;
      this.#pending.delete(key);
    }
  }
}
