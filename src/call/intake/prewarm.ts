// Agent sessions dialed while the carrier is still setting up the media stream (the voice
// webhook answers before the stream connects), kept under the call's key until the stream claims
// one. A session nobody claims would hold one of the agent's limited concurrent connections
// (docs/protocols/agent.md: over the limit the handshake fails with 429), so it is closed after
// its TTL.
import type { AgentSession } from '../../agent/session.js';
import type { MediaFormat } from '../../audio/format.js';

/** An agent session dialed while a webhook was answered; `ready` is null if that dial failed. */
export interface PrewarmedAgent {
  ready: Promise<AgentSession | null>;
  /** The format its Settings declared: a stream bringing another one cannot use it. */
  format: MediaFormat;
  close(): void;
}

/** The pool key of a call: call ids are unique per carrier only. */
export function prewarmKey(carrier: string, callSid: string): string {
  return `${carrier}:${callSid}`;
}

export interface PrewarmPoolOptions {
  /** Called after an unclaimed session was closed at the end of its TTL. */
  onExpired?: (key: string) => void;
  /** Called after a session was closed because another was stored under its key (a retried webhook). */
  onReplaced?: (key: string) => void;
}

interface Entry<T> {
  session: T;
  timer: ReturnType<typeof setTimeout>;
}

export class PrewarmPool<T extends { close(): void }> {
  readonly #entries = new Map<string, Entry<T>>();

  constructor(private readonly opts: PrewarmPoolOptions = {}) {}

  get size(): number {
    return this.#entries.size;
  }

  /** Stores a session under `key`; one already stored under it (a retried webhook) is closed. */
  put(key: string, session: T, ttlMs: number): void {
    const previous = this.#entries.get(key);
    if (previous) {
      clearTimeout(previous.timer);
      if (previous.session !== session) {
        closeQuietly(previous.session);
        this.opts.onReplaced?.(key);
      }
    }
    const timer = setTimeout(() => this.#expire(key), Math.max(0, ttlMs));
    // A waiting session must not keep the process alive through a shutdown.
    timer.unref?.();
    this.#entries.set(key, { session, timer });
  }

  /** Hands the session over once: the caller owns it from here and must close it. */
  take(key: string): T | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    clearTimeout(entry.timer);
    this.#entries.delete(key);
    return entry.session;
  }

  /** Closes every stored session (shutdown). */
  closeAll(): void {
    const entries = [...this.#entries.values()];
    this.#entries.clear();
    for (const entry of entries) {
      clearTimeout(entry.timer);
      closeQuietly(entry.session);
    }
  }

  #expire(key: string): void {
    const entry = this.#entries.get(key);
    if (!entry) return;
    this.#entries.delete(key);
    closeQuietly(entry.session);
    this.opts.onExpired?.(key);
  }
}

/** One session failing to close must not stop the others from closing. */
function closeQuietly(session: { close(): void }): void {
  try {
    session.close();
  } catch {
    // Nothing left to do with a session that cannot even close.
  }
}
