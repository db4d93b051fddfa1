// The live-calls feed the console follows (docs/console.md): one per instance, shared by every
// open console. While anyone follows, it keeps the deployment's live calls and tells followers
// what started, ended or changed. Its reads of the directory are triggered by a change anywhere in
// the fleet (one pub/sub message per change) or by the heartbeat, and coalesced: the cost is per
// instance, never per open console.
import type { LiveCall } from '../call/watch/live-call.js';
import { CoalescedRun } from './coalesced-run.js';

export type LiveFeedEvent =
  | { type: 'started'; call: LiveCall }
  | { type: 'updated'; call: LiveCall }
  | { type: 'ended'; callSid: string };

export type LiveFeedListener = (event: LiveFeedEvent) => void;

export interface LiveFeedDeps {
  /** Every live call of the deployment now. */
  list(): Promise<LiveCall[]>;
  /** Reads again at least this often while followed (an instance that died leaves by expiry). */
  refreshEveryMs: number;
  /** Changes closer together than this are read once. */
  coalesceMs: number;
  onError?(err: Error): void;
}

export class LiveFeed {
  readonly #deps: LiveFeedDeps;
  readonly #listeners = new Set<LiveFeedListener>();
  /** callSid → the call and its JSON, as last read. */
  #calls = new Map<string, { call: LiveCall; json: string }>();
  #timer: NodeJS.Timeout | null = null;
  #pending: NodeJS.Timeout | null = null;
  readonly #reader = new CoalescedRun(() => this.#readOnce());
  #reads = 0;

  constructor(deps: LiveFeedDeps) {
    this.#deps = deps;
  }

  /** Follows the feed: resolves with the calls live now; `listener` hears every change after. */
  async follow(listener: LiveFeedListener): Promise<{ calls: LiveCall[]; stop: () => void }> {
    if (!this.#timer) {
      this.#timer = setInterval(() => this.changed(), this.#deps.refreshEveryMs);
      this.#timer.unref();
      // A first follower reads now; later ones share the calls already held, kept current by changes.
      await this.#read();
    } else if (this.#reader.inFlight) {
      await this.#reader.inFlight;
    }
    // Taken together, with nothing in between: the snapshot and then every change after it.
    this.#listeners.add(listener);
    return {
      calls: [...this.#calls.values()].map((entry) => entry.call),
      stop: () => {
        this.#listeners.delete(listener);
        if (this.#listeners.size > 0) return;
        if (this.#timer) clearInterval(this.#timer);
        if (this.#pending) clearTimeout(this.#pending);
        this.#timer = null;
        this.#pending = null;
        this.#calls = new Map();
      },
    };
  }

  /** Something changed somewhere: read again soon, once for every change until then. */
  changed(): void {
    if (!this.#timer || this.#pending) return;
    this.#pending = setTimeout(() => {
      this.#pending = null;
      void this.#read();
    }, this.#deps.coalesceMs);
    this.#pending.unref();
  }

  get followers(): number {
    return this.#listeners.size;
  }

  /** Directory reads so far (the benchmark shows they do not grow with followers). */
  get reads(): number {
    return this.#reads;
  }

  close(): void {
    if (this.#timer) clearInterval(this.#timer);
    if (this.#pending) clearTimeout(this.#pending);
    this.#timer = null;
    this.#pending = null;
    this.#listeners.clear();
  }

  #read(): Promise<void> {
    return this.#reader.run();
  }

  async #readOnce(): Promise<void> {
    let calls: LiveCall[];
    try {
      this.#reads++;
      calls = await this.#deps.list();
    } catch (err) {
      // The directory is away: followers keep what they have until it answers again.
      this.#deps.onError?.(err as Error);
      return;
    }
    if (!this.#timer) return;
    const next = new Map(calls.map((call) => [call.callSid, { call, json: JSON.stringify(call) }]));
    const events: LiveFeedEvent[] = [];
    for (const callSid of this.#calls.keys()) {
      if (!next.has(callSid)) events.push({ type: 'ended', callSid });
    }
    for (const [callSid, entry] of next) {
      const before = this.#calls.get(callSid);
      if (!before) events.push({ type: 'started', call: entry.call });
      else if (before.json !== entry.json) events.push({ type: 'updated', call: entry.call });
    }
    this.#calls = next;
    for (const event of events) for (const listener of this.#listeners) listener(event);
  }
}
