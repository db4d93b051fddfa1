// The one queue of what waits for the voice agent (docs/protocols/agent.md: anything sent before
// `SettingsApplied` is ignored): caller audio and control messages in arrival order, each kind
// bounded, the oldest of a kind dropped and counted past its bound. It is made when a stream's
// `start` arrives, so the caller's first frames wait here while the stream is verified, and the
// call's agent link keeps it from then on: a frame waits in one queue, never in two in a row.
import type { AgentClientMessage } from '../../agent/protocol.js';
import type { Metrics } from '../../metrics/metrics.js';

/** Control messages waiting for the agent; a call produces a handful at most. */
export const MAX_QUEUED_MESSAGES = 32;

type Queued = { kind: 'audio'; chunk: Buffer } | { kind: 'message'; message: AgentClientMessage };

/** Where the queue goes once an agent is ready. */
export interface QueueDrain {
  sendAudio(chunk: Buffer): void;
  send(message: AgentClientMessage): void;
}

export class AgentQueue {
  #entries: Queued[] = [];
  #audioBytes = 0;
  #messages = 0;

  constructor(
    /** Caller audio held; past it the oldest is dropped and counted. */
    readonly maxAudioBytes: number,
    private readonly metrics: Pick<Metrics, 'audioDropped' | 'agentMessagesDropped'>,
  ) {}

  get audioBytes(): number {
    return this.#audioBytes;
  }

  get messages(): number {
    return this.#messages;
  }

  audio(chunk: Buffer): void {
    this.#entries.push({ kind: 'audio', chunk });
    this.#audioBytes += chunk.length;
    while (this.#audioBytes > this.maxAudioBytes) {
      if (!this.#dropOldest('audio')) break;
    }
  }

  message(message: AgentClientMessage): void {
    this.#entries.push({ kind: 'message', message });
    this.#messages++;
    if (this.#messages > MAX_QUEUED_MESSAGES) this.#dropOldest('message');
  }

  /**
   * Each held frame, in order, replaced by what `heardAs` returns for it (an answering machine's
   * silence in place of a greeting): once, by the call that takes the queue over.
   */
  mapAudio(heardAs: (chunk: Buffer) => Buffer): void {
    for (const entry of this.#entries) {
      if (entry.kind === 'audio') entry.chunk = heardAs(entry.chunk);
    }
  }

  /** Everything to `agent` in arrival order; the queue is empty after. */
  drainTo(agent: QueueDrain): void {
    const entries = this.#entries;
    this.clear();
    for (const entry of entries) {
      if (entry.kind === 'audio') agent.sendAudio(entry.chunk);
      else agent.send(entry.message);
    }
  }

  clear(): void {
    this.#entries = [];
    this.#audioBytes = 0;
    this.#messages = 0;
  }

  /** Drops the oldest entry of `kind`; false when there is none. */
  #dropOldest(kind: Queued['kind']): boolean {
    const index = this.#entries.findIndex((entry) => entry.kind === kind);
    if (index < 0) return false;
    const [dropped] = this.#entries.splice(index, 1);
    if (dropped?.kind === 'audio') {
      this.#audioBytes -= dropped.chunk.length;
      this.metrics.audioDropped.inc({ buffer: 'agent_queue' });
    } else if (dropped?.kind === 'message') {
      this.#messages--;
      this.metrics.agentMessagesDropped.inc();
    }
    return true;
  }
}
