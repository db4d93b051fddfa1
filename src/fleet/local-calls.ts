// Live calls of this instance alone: listed from its registry, controlled directly. This is the
// whole of it without Redis, and the owner's side of every relayed control in a fleet.
import type { ControlOutcome, LiveCall, LiveCalls } from '../call/live-call.js';
import { liveCallOf } from '../call/live-call.js';
import type { CallRegistry } from '../call/registry.js';

export interface LocalCallsDeps {
  registry: CallRegistry;
  instance: string;
  region: string;
}

export function localLiveCalls(deps: LocalCallsDeps): LiveCalls & { listNow(): LiveCall[] } {
  const where = { instance: deps.instance, region: deps.region };
  const notHere = (callSid: string): ControlOutcome => ({
    ok: false,
    reason: 'not_found',
    message: `no live call ${JSON.stringify(callSid.slice(0, 80))}`,
  });
  const listNow = () =>
    deps.registry
      .all()
      .filter((session) => !session.isEnding)
      .map((session) => liveCallOf(session, where));
  return {
    listNow,
    list: async () => listNow(),
    async hangup(callSid) {
      const session = deps.registry.get(callSid);
      if (!session || session.isEnding) return notHere(callSid);
      session.hangup();
      return { ok: true, instance: deps.instance };
    },
    async transfer(callSid, target) {
      const session = deps.registry.get(callSid);
      if (!session || session.isEnding) return notHere(callSid);
      try {
        await session.transfer(target);
        return { ok: true, instance: deps.instance };
      } catch (err) {
        return { ok: false, reason: 'refused', message: (err as Error).message };
      }
    },
  };
}
