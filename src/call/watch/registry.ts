// The live-call registry: every call from its media `start` to its end, so drain, capacity and
// the no-orphans checks have one place to look.
import type { CallSession } from '../session/session.js';

export type RegistryChange = 'added' | 'removed';

export class CallRegistry {
  private readonly calls = new Map<string, CallSession>();
  private idleWaiters: Array<() => void> = [];
  private readonly watchers = new Set<(change: RegistryChange, session: CallSession) => void>();

  add(session: CallSession): void {
    this.calls.set(session.info.callSid, session);
    this.notify('added', session);
  }

  remove(session: CallSession): void {
    if (this.calls.get(session.info.callSid) === session) {
      this.calls.delete(session.info.callSid);
      this.notify('removed', session);
    }
    if (this.calls.size === 0) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }

  get(callSid: string): CallSession | undefined {
    return this.calls.get(callSid);
  }

  has(callSid: string): boolean {
    return this.calls.has(callSid);
  }

  get size(): number {
    return this.calls.size;
  }

  all(): CallSession[] {
    return [...this.calls.values()];
  }

  /** Calls `watcher` after each call added or removed (the fleet's live-call directory); returns an unsubscribe. */
  watch(watcher: (change: RegistryChange, session: CallSession) => void): () => void {
    this.watchers.add(watcher);
    return () => this.watchers.delete(watcher);
  }

  private notify(change: RegistryChange, session: CallSession): void {
    for (const watcher of this.watchers) watcher(change, session);
  }

  /** Resolves once no call is live. */
  whenIdle(): Promise<void> {
    if (this.calls.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }
}
