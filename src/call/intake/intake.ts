// The call intake a carrier's webhook routes use (docs/architecture.md, "Call intake"): whether a
// call may be taken now, and preparing one that may: its single-use stream token, the agent
// profile its called number routes to, an agent dialed ahead for the format its stream will
// bring, and the media URL the carrier is told to open. Every carrier uses this one; none copies it.
import type { Logger } from 'pino';
import type { AgentDialer } from '../../agent/dialer.js';
import { buildSettings } from '../../agent/settings.js';
import { unsupportedFormatReason } from '../../audio/format.js';
import type { Config } from '../../config/types.js';
import type { Metrics } from '../../metrics/metrics.js';
import type { AdmissionControl } from './admission.js';
import { profileWithVariables } from '../../agent/placeholders.js';
import type { VerdictReport } from '../outbound/amd-gate.js';
import type {
  Admission,
  CallAnnouncement,
  CallIntake,
  OutboundStatusReport,
  PreparedCall,
  ResolvedContext,
} from '../carrier-port.js';
import type { MachineVerdicts } from '../outbound/machine-verdicts.js';
import { mediaUrl } from './media-url.js';
import { issueObserverToken } from '../watch/observer.js';
import {
  contextIdOf,
  MAX_CONTEXT_REF_CHARS,
  type OutboundContext,
  type OutboundContexts,
} from '../outbound/outbound-context.js';
import { DECLINE_AUDIO_PATH } from './prompt-routes.js';
import { type PrewarmedAgent, type PrewarmPool, prewarmKey } from './prewarm.js';
import type { PendingStreams } from './pending-streams.js';
import type { CallRegistry } from '../watch/registry.js';
import { issueStreamToken } from './stream-token.js';
import { allowanceOf, type RequestAllowance, trustOf } from './trust.js';
import { ConflictError } from '../../errors.js';
import { PreparedAnswers } from './prepared-answers.js';

export interface IntakeDeps {
  config: Config;
  dial: AgentDialer;
  metrics: Metrics;
  logger: Logger;
  registry: CallRegistry;
  prewarm: PrewarmPool<PrewarmedAgent>;
  admission: AdmissionControl;
  isDraining(): boolean;
  verdicts: MachineVerdicts;
  /** Outbound contexts, kept in the shared store behind the references carriers bring back. */
  contexts: Pick<OutboundContexts, 'resolve'>;
  /** Where outbound calls' final statuses go (the dialer, for a campaign's attempts). */
  onOutboundStatus(report: OutboundStatusReport): void;
  /** Where an outbound call's own id goes once a callback names it (the dialer, for its attempt). */
  onOutboundCallIdentified?(attemptId: string, carrier: string, callSid: string): void;
  /** Calls prepared here whose stream has not arrived: a drain waits for them. */
  pending?: PendingStreams;
  /**
   * Claims a key once in the shared store (store.claimOnce): a verified announcement of a call is
   * acted on once, on every instance and after a restart. Without it, once per process.
   */
  claimOnce?(key: string, validForMs: number): Promise<boolean>;
  /** Whether the shared store answers; while it does not, new calls are declined (default: it does). */
  storeReachable?(): boolean;
  /**
   * A peer instance ready for new calls (fleet/live-directory.ts), or null. While this instance
   * drains, a new call is prepared on it instead of being declined.
   */
  readyPeer?(): string | null;
}

export const DECLINED_MESSAGE =
  "Sorry, we can't take your call right now. Please call back in a few minutes.";
/** An outbound context's reference rides in the stream token, which rides in a URL path: it is small. */
export const MAX_CONTEXT_CHARS = MAX_CONTEXT_REF_CHARS;

/**
 * Whether a new call fits now: not draining, and under the admitted concurrency, counting calls
 * whose stream has not arrived yet (they hold a pre-warmed agent).
 */
export function admitNewCall(
  deps: Pick<IntakeDeps, 'registry' | 'prewarm' | 'admission' | 'isDraining' | 'storeReachable'>,
): Admission {
  if (deps.isDraining()) return 'draining';
  // Without the shared store no stream token can be claimed: the caller is told to call back.
  if (deps.storeReachable && !deps.storeReachable()) return 'store_unavailable';
  const committed = deps.registry.size + deps.prewarm.size;
  return deps.admission.admits(committed) ? 'admitted' : 'at_capacity';
}

/** Dials the agent while the carrier is still opening the media stream (pre-warming). */
function prewarm(
  deps: IntakeDeps,
  call: CallAnnouncement,
  profileName: string,
  outbound: OutboundContext | null,
): void {
  const { config, metrics } = deps;
  const named = config.profiles[profileName];
  if (!config.agent.prewarm || !named) return;
  const profile = outbound ? profileWithVariables(named, outbound.variables) : named;
  const problem = unsupportedFormatReason(call.mediaFormat);
  if (problem !== null) {
    // The stream will be refused for the same reason: no agent session is spent on it.
    deps.logger.warn({ carrier: call.carrier, callSid: call.callSid, problem }, 'not pre-warming');
    return;
  }
  const settings = buildSettings(
    profile,
    { callSid: call.callSid, streamSid: '', carrier: call.carrier },
    call.mediaFormat,
  );
  const log = deps.logger.child({ carrier: call.carrier, callSid: call.callSid });
  const ready = deps.dial(settings, log).catch((err: Error) => {
    metrics.prewarm.inc({ outcome: 'failed' });
    log.warn({ err: err.message }, 'pre-warming the agent failed; the stream will dial again');
    return null;
  });
  deps.prewarm.put(
    prewarmKey(call.carrier, call.callSid),
    {
      ready,
      format: { ...call.mediaFormat },
      close: () => void ready.then((session) => session?.close()),
    },
    config.agent.prewarmTtlMs,
  );
}

/**
 * Prepares a call that may be taken: its stream token, the profile it speaks with, an agent dialed
 * ahead (when the announcement is verified), and the media URL the carrier is told to open.
 */
function prepareCall(deps: IntakeDeps, call: CallAnnouncement): PreparedCall {
  const { config } = deps;
  const allowed = allowanceOf(call.verified);
  if (call.context !== undefined && !allowed.outboundContext) {
    throw new RangeError('an unverified request cannot name an outbound context');
  }
  if (
    call.context !== undefined &&
    contextIdOf(config.streamTokenSecret, call.context.ref, call.carrier) === null
  ) {
    throw new RangeError('call context not issued here for this carrier');
  }
  const outbound = call.context?.context ?? null;
  // An outbound call speaks with the profile it was placed with; an inbound one with its number's.
  const profile =
    outbound && config.profiles[outbound.profile]
      ? outbound.profile
      : (config.numbers.routes[call.to] ?? config.numbers.default);
  // A draining instance prepares the call for a ready peer: the token and the media URL name
  // the peer, whose own admission takes the stream; nothing is pre-warmed or awaited here.
  const peer = deps.isDraining() ? (deps.readyPeer?.() ?? null) : null;
  const instance = peer ?? config.instanceId;
  const token = issueStreamToken(
    config.streamTokenSecret,
    {
      carrier: call.carrier,
      callSid: call.callSid,
      profile,
      from: call.from,
      to: call.to,
      direction: call.direction,
      ...(call.context === undefined ? {} : { context: call.context.ref }),
      instance,
    },
    config.streamTokenTtlMs,
  );
  // Only a verified announcement may spend an agent session, or hold a slot (and a drain) for
  // its stream: anything else waits until its stream presents the token. A call prepared for a
  // peer is pre-warmed by nobody here.
  if (peer === null && allowed.prewarm) {
    prewarm(deps, call, profile, outbound);
    deps.pending?.expect(prewarmKey(call.carrier, call.callSid), config.streamTokenTtlMs);
  }
  deps.logger.info(
    {
      carrier: call.carrier,
      callSid: call.callSid,
      profile,
      direction: call.direction,
      instance,
      trust: trustOf(call.verified),
    },
    peer === null ? 'call prepared' : 'call prepared for a ready peer: this instance drains',
  );
  return {
    token,
    mediaUrl: mediaUrl(config.publicUrl, call.carrier, instance, token),
    observerToken: allowed.observerToken
      ? issueObserverToken(
          config.streamTokenSecret,
          { carrier: call.carrier, callSid: call.callSid },
          config.streamTokenTtlMs,
        )
      : null,
    profile,
  };
}

/** How long a call's first verified announcement is remembered in the shared store. */
export const PREPARED_CLAIM_MS = 24 * 60 * 60_000;

export function createCallIntake(deps: IntakeDeps): CallIntake {
  const { config, metrics } = deps;

  const answers = new PreparedAnswers(config.streamTokenTtlMs);

  const intake: CallIntake = {
    async prepareOnce(call: CallAnnouncement): Promise<PreparedCall> {
      if (!call.verified) return intake.prepare(call);
      return answers.once(call.carrier, call.callSid, async () => {
        const key = `call-prepared:${call.carrier}:${call.callSid}`;
        if (deps.claimOnce && !(await deps.claimOnce(key, PREPARED_CLAIM_MS))) {
          metrics.carrierRequestsRejected.inc({ carrier: call.carrier, reason: 'replayed' });
          throw new ConflictError('this call was already answered: a repeated request gains nothing new');
        }
        return intake.prepare(call);
      });
    },

    admit(carrier: string): Admission {
      let admission = admitNewCall(deps);
      // Draining, with a ready peer and the call's state in the shared store: the call is prepared
      // for the peer (`prepare`), not declined.
      if (admission === 'draining' && deps.readyPeer?.() != null) admission = 'admitted';
      if (admission !== 'admitted') {
        // Declined politely by the carrier's answer, before any agent is dialed.
        metrics.callsDeclined.inc({ carrier, reason: admission });
        deps.logger.warn({ carrier, reason: admission }, 'call declined');
      }
      return admission;
    },

    allowance(verified: boolean): RequestAllowance {
      return allowanceOf(verified);
    },

    prepare(call: CallAnnouncement): PreparedCall {
      return prepareCall(deps, call);
    },

    // Read when a call is declined: the public URL may be settled after the app is built.
    get decline() {
      return {
        message: DECLINED_MESSAGE,
        redirectUrl: config.declineRedirectUrl,
        audioUrl: config.speech?.prompts
          ? `${config.publicUrl.replace(/\/+$/, '')}${DECLINE_AUDIO_PATH}`
          : null,
      };
    },

    refused(carrier: string, reason: string): void {
      metrics.carrierRequestsRejected.inc({ carrier, reason });
    },

    async outboundContext(carrier: string, ref: unknown, verified: boolean): Promise<ResolvedContext | null> {
      if (!allowanceOf(verified).outboundContext || typeof ref !== 'string') return null;
      const context = await deps.contexts.resolve(ref, carrier);
      return context === null ? null : { ref, context };
    },

    outboundCallIdentified(carrier: string, context: OutboundContext, callSid: string): void {
      if (context.attemptId === null) return;
      deps.onOutboundCallIdentified?.(context.attemptId, carrier, callSid);
    },

    outboundStatus(report: OutboundStatusReport): void {
      metrics.outboundCallStatuses.inc({ carrier: report.carrier, status: report.status });
      deps.logger.info(
        {
          carrier: report.carrier,
          callSid: report.callSid,
          status: report.status,
          reason: report.reason,
          attempt: report.context.attemptId,
        },
        'outbound call ended at the carrier',
      );
      deps.onOutboundStatus(report);
    },

    machineVerdict(carrier: string, callSid: string, report: VerdictReport): void {
      deps.verdicts.deliver(carrier, callSid, report);
    },
  };
  return intake;
}
