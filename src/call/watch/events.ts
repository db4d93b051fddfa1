// What happens on a call, as observers see it (the `callbridge call` feed, logs). Subscribers
// may arrive before the call's media stream does, so the hub is keyed by CallSid, not by session.

import type { CallEvent } from '../../api/events.js';

/** As the wire contract declares it (src/api/events.ts). */
export type { CallEvent } from '../../api/events.js';

type Listener = (event: CallEvent) => void;

/** Where observers subscribe to a call's events: this instance's hub, or the fleet's relay. */
export interface CallEventFeed {
  subscribe(callSid: string, listener: Listener): () => void;
  /** Resolves once events of the call reach a listener subscribed just before, wherever it runs. */
  following?(callSid: string): Promise<void>;
}

export class CallEventHub implements CallEventFeed {
  readonly #taps = new Set<(callSid: string, event: CallEvent) => void>();

  private readonly listeners = new Map<string, Set<Listener>>();

  subscribe(callSid: string, listener: Listener): () => void {
    let set = this.listeners.get(callSid);
    if (!set) {
      set = new Set();
      this.listeners.set(callSid, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.listeners.get(callSid) === set) this.listeners.delete(callSid);
    };
  }

  /** Sees every event of every call (the fleet relays them to observers on other instances). */
  tap(listener: (callSid: string, event: CallEvent) => void): () => void {
    this.#taps.add(listener);
    return () => this.#taps.delete(listener);
  }

  publish(callSid: string, event: CallEvent): void {
    for (const tap of this.#taps) tap(callSid, event);
    const set = this.listeners.get(callSid);
    if (!set) return;
    for (const listener of set) listener(event);
  }

  get subscriberCount(): number {
    let n = 0;
    for (const set of this.listeners.values()) n += set.size;
    return n;
  }
}
