// What this instance does with what a peer asks of it (docs/architecture.md section 8): close an
// agent it pre-warmed for a stream that landed elsewhere, control a call it carries, and relay a
// call's audio to a listener elsewhere.
import type { Logger } from 'pino';
import type { ControlOutcome, LiveCalls } from '../call/watch/live-call.js';
import type { PendingStreams } from '../call/intake/pending-streams.js';
import { type PrewarmedAgent, type PrewarmPool, prewarmKey } from '../call/intake/prewarm.js';
import type { Metrics } from '../metrics/metrics.js';
import type { RelayDeps } from './relay.js';

export interface InboxDeps {
  /** The calls carried here. */
  local: LiveCalls;
  prewarm: PrewarmPool<PrewarmedAgent>;
  pending: PendingStreams;
  metrics: Metrics;
  /** Starts relaying a call carried here to the listeners elsewhere. */
  relayListening(callSid: string): void;
  logger: Logger;
}

/** A control's outcome as its sender is answered. */
function answer(outcome: ControlOutcome) {
  return outcome.ok ? { ok: true } : { ok: false, reason: outcome.reason, message: outcome.message };
}

export function fleetInbox(deps: InboxDeps): RelayDeps['onMessage'] {
  const { local, logger } = deps;
  return async (message) => {
    switch (message.type) {
      case 'release_prewarm': {
        const key = prewarmKey(message.carrier, message.callSid);
        deps.pending.settled(key);
        const orphan = deps.prewarm.take(key);
        if (orphan) {
          orphan.close();
          deps.metrics.prewarm.inc({ outcome: 'released' });
          logger.info(
            { carrier: message.carrier, callSid: message.callSid },
            'released an agent pre-warmed for a stream that landed elsewhere',
          );
        }
        return null;
      }
      case 'hangup':
        return answer(await local.hangup(message.callSid));
      case 'transfer':
        return answer(await local.transfer(message.callSid, message.target));
      case 'recording':
        return answer(await local.recording(message.callSid, message.action));
      case 'listen':
        deps.relayListening(message.callSid);
        return null;
    }
  };
}
