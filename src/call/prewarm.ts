// Agent sessions dialed while the carrier is still setting up the media stream (the voice
// webhook answers before the stream connects), kept under the CallSid until the stream claims
// one. A session nobody claims would hold one of the agent's limited concurrent connections
// (PROTOCOLS.md section 1: over the limit the handshake fails with 429), so it is closed after
// its TTL.

export interface PrewarmPoolOptions {
  /** Called after an unclaimed session was closed at the end of its TTL. */
  onExpired?: (callSid: string) => void;
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

  /** Stores a session for `callSid`; one already stored under it (a retried webhook) is closed. */
  put(callSid: string, session: T, ttlMs: number): void {
    const previous = this.#entries.get(callSid);
    if (previous) {
      clearTimeout(previous.timer);
      if (previous.session !== session) closeQuietly(previous.session);
    }
    const timer = setTimeout(() => this.#expire(callSid), Math.max(0, ttlMs));
    // A waiting session must not keep the process alive through a shutdown.
    timer.unref?.();
    this.#entries.set(callSid, { session, timer });
  }

  /** Hands the session over once: the caller owns it from here and must close it. */
  take(callSid: string): T | undefined {
    const entry = this.#entries.get(callSid);
    if (!entry) return undefined;
    clearTimeout(entry.timer);
    this.#entries.delete(callSid);
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

  #expire(callSid: string): void {
    const entry = this.#entries.get(callSid);
    if (!entry) return;
    this.#entries.delete(callSid);
    closeQuietly(entry.session);
    this.opts.onExpired?.(callSid);
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
