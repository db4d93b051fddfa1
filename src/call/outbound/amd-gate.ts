// The answering-machine gate of an outbound call (docs/protocols/answering-machine-detection.md):
// until the carrier's detection gives a verdict, what the agent says is held back, so the agent
// never talks over a voicemail greeting, and the agent hears silence rather than the greeting. A
// human (or an unsure verdict, or no verdict in time) releases what was held at once, so the
// person hears the agent's greeting with no further wait; a machine drops it, and the call leaves
// its message after the beep or hangs up. Hanging up on a person is the costly error, so every
// doubt resolves to human.
import type { OutboundAmd } from './outbound-context.js';

/** A verdict as the call core reads every carrier's. */
export type MachineVerdict = 'human' | 'machine' | 'fax' | 'unknown';

export interface VerdictReport {
  verdict: MachineVerdict;
  /** For a machine: its greeting has ended (the beep, or silence after it), so a message may start. */
  messageEnded: boolean;
  /** How long the carrier took to decide, as it reports it; null when it does not. */
  detectionMs: number | null;
  /** The carrier's own word (`machine_end_beep`, `not_sure`, …), for the record. */
  raw: string;
}

/**
 * `listening`: holding the agent back until a verdict; `open`: a person, the agent speaks;
 * `awaiting_message_end`: a machine whose greeting goes on; `leaving_message`: the voicemail was
 * asked for, and what the agent was saying before it is dropped; `speaking_message`: the voicemail
 * plays; `closed`: the call hangs up on a machine, or ended.
 */
export const AMD_GATE_TRANSITIONS = Object.freeze({
  listening: ['open', 'awaiting_message_end', 'leaving_message', 'closed'],
  awaiting_message_end: ['leaving_message', 'closed'],
  leaving_message: ['speaking_message', 'closed'],
  speaking_message: ['closed'],
  open: ['closed'],
  closed: [],
} as const satisfies Record<string, readonly string[]>);

export type AmdGateState = keyof typeof AMD_GATE_TRANSITIONS;

/** What the session does once the gate decides. */
export type GateDecision =
  | { kind: 'speak' }
  | { kind: 'wait_for_message_end' }
  | { kind: 'leave_message'; text: string | null; audioUrl: string | null }
  | { kind: 'hang_up' }
  | { kind: 'none' };

/** Agent output is held up to this much (a greeting of a minute at 16-bit 16 kHz); beyond, dropped. */
export const MAX_HELD_BYTES = 2 * 1024 * 1024;

export class AmdGate {
  #state: AmdGateState = 'listening';
  #held: Array<() => void> = [];
  #heldBytes = 0;
  #verdict: VerdictReport | null = null;
  #dropped = 0;

  constructor(readonly amd: OutboundAmd) {}

  get state(): AmdGateState {
    return this.#state;
  }

  /** Whether the agent's output must not reach the caller now. */
  get holds(): boolean {
    return this.#state !== 'open' && this.#state !== 'speaking_message';
  }

  /**
   * Whether the agent hears silence instead of the answerer: until a person is heard, and while a
   * voicemail is left, since a recorder's sounds (its beep, a carrier's beep event that comes as
   * the beep starts) must not interrupt the message.
   */
  get mutesAnswerer(): boolean {
    return this.#state !== 'open';
  }

  /** The agent started the reply that speaks the voicemail: from here its output passes. */
  messageStarted(): boolean {
    if (this.#state !== 'leaving_message') return false;
    this.#move('speaking_message');
    return true;
  }

  /** A machine whose greeting has not ended yet: no verdict in time means it ended now. */
  get awaitingMessageEnd(): boolean {
    return this.#state === 'awaiting_message_end';
  }

  /** The verdict taken, or null while there is none. */
  get verdict(): VerdictReport | null {
    return this.#verdict;
  }

  /** Bytes of agent audio the gate let go unheard because its hold was full. */
  get droppedBytes(): number {
    return this.#dropped;
  }

  /** Holds a step of the agent's output (audio or a reply marker) until the verdict. */
  hold(step: () => void, bytes = 0): void {
    if (this.#state !== 'listening') return; // a machine's call: the agent's greeting is never heard
    if (this.#heldBytes + bytes > MAX_HELD_BYTES) {
      this.#dropped += bytes;
      return;
    }
    this.#heldBytes += bytes;
    this.#held.push(step);
  }

  /** Applies a verdict; only the first one that decides counts (a later `machine_end_*` completes a `machine_start`). */
  decide(report: VerdictReport): GateDecision {
    const waitingForEnd = this.#state === 'awaiting_message_end';
    if (this.#state !== 'listening' && !waitingForEnd) return { kind: 'none' };
    if (report.verdict === 'human' || report.verdict === 'unknown') {
      if (waitingForEnd) return { kind: 'none' }; // a machine already heard: a late doubt changes nothing
      this.#verdict = report;
      return this.#open();
    }
    this.#verdict = report;
    this.#drop();
    if (report.verdict === 'fax' || this.amd.mode === 'hangup') {
      this.#move('closed');
      return { kind: 'hang_up' };
    }
    if (!report.messageEnded) {
      if (!waitingForEnd) this.#move('awaiting_message_end');
      return { kind: 'wait_for_message_end' };
    }
    this.#move('leaving_message');
    return { kind: 'leave_message', text: this.amd.voicemailText, audioUrl: this.amd.voicemailAudioUrl };
  }

  /** No verdict in time: treated as a person. */
  timedOut(): GateDecision {
    if (this.#state !== 'listening') return { kind: 'none' };
    this.#verdict = { verdict: 'unknown', messageEnded: false, detectionMs: null, raw: 'timeout' };
    return this.#open();
  }

  close(): void {
    this.#drop();
    if (this.#state !== 'closed') this.#state = 'closed';
  }

  #open(): GateDecision {
    this.#move('open');
    const held = this.#held;
    this.#drop();
    for (const step of held) step();
    return { kind: 'speak' };
  }

  #drop(): void {
    this.#held = [];
    this.#heldBytes = 0;
  }

  #move(next: AmdGateState): void {
    const allowed: readonly string[] = AMD_GATE_TRANSITIONS[this.#state];
    if (!allowed.includes(next)) throw new Error(`AMD gate cannot move from ${this.#state} to ${next}`);
    this.#state = next;
  }
}
