// What happens on a call, as observers see it (the `callbridge call` feed, logs). Subscribers
// may arrive before the call's media stream does, so the hub is keyed by CallSid, not by session.

export type CallEvent =
  | { type: 'transcript'; role: 'user' | 'assistant'; content: string; interrupted?: boolean }
  | { type: 'barge-in' }
  | { type: 'function'; name: string; outcome: string }
  | { type: 'dtmf'; digits: string }
  | { type: 'end'; reason: string };

type Listener = (event: CallEvent) => void;

export class CallEventHub {
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

  publish(callSid: string, event: CallEvent): void {
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
