// A call made from an admitted stream: the profile its grant routes to (an outbound call's spoken
// with its contact's variables, recorded as its call or campaign asks), the facts of the call, what
// its session works with (the carrier's downlink rules, the prompts, a recorder when one is asked
// for), and its start: the agent pre-warmed here adopted when its format fits, else dialed.
import type { AgentSession } from '../../agent/session.js';
import { profileWithVariables } from '../../agent/placeholders.js';
import { sameFormat } from '../../audio/format.js';
import type { AgentProfile, Config } from '../../config/types.js';
import type { CallRecord } from '../../store/call-record.js';
import type { CarrierAdapter } from '../carrier-port.js';
import type { StreamGrant } from '../intake/stream-token.js';
import { prewarmKey } from '../intake/prewarm.js';
import type { OutboundContext } from '../outbound/outbound-context.js';
import type { AgentQueue } from '../session/agent-queue.js';
import type { CallDeps, CallInfo } from '../session/call-info.js';
import { fallbackAudio } from '../session/fallback-audio.js';
import { CallSession } from '../session/session.js';
import type { CarrierLeg } from './carrier-leg.js';
import type { StreamStart } from './admit.js';
import type { MediaSocketDeps } from './deps.js';

/** What the stream brings to its call besides its `start` and its grant. */
export interface CallMaterials {
  adapter: CarrierAdapter;
  leg: CarrierLeg;
  /** The queue the caller's first frames wait in since `start`: the agent link keeps it. */
  heldAudio: AgentQueue;
  maxEarlyAudioBytes: number;
}

/** The profile the call speaks with: its grant's (else the default), for an outbound call its contact's. */
export function callProfile(
  config: Config,
  grant: StreamGrant,
  outbound: OutboundContext | null,
): { profileName: string; profile: AgentProfile } {
  const profileName = config.profiles[grant.profile] ? grant.profile : config.numbers.default;
  const named = config.profiles[profileName]!;
  // An outbound call's prompt and greeting speak the contact's variables.
  const spoken = outbound ? profileWithVariables(named, outbound.variables) : named;
  // Recording asked for by the call or its campaign wins over the profile's (docs/recordings.md).
  const profile = outbound?.recording ? { ...spoken, recording: outbound.recording } : spoken;
  return { profileName, profile };
}

export function callInfo(
  config: Config,
  carrier: string,
  start: StreamStart,
  grant: StreamGrant,
  outbound: OutboundContext | null,
): CallInfo {
  const { profileName, profile } = callProfile(config, grant, outbound);
  return {
    callSid: start.callSid,
    streamSid: start.streamSid,
    carrier,
    direction: grant.direction,
    from: grant.from,
    to: grant.to,
    profileName,
    profile,
    mediaFormat: start.mediaFormat,
    ...(outbound ? { outbound } : {}),
    ...(outbound?.campaignId ? { campaign: outbound.campaignId } : {}),
  };
}

function callDeps(info: CallInfo, materials: CallMaterials, deps: MediaSocketDeps): CallDeps {
  const { config } = deps;
  const downlink = materials.adapter.downlink(info.mediaFormat);
  const recorded = deps.recordCall?.(info) ?? null;
  return {
    dial: deps.dial,
    metrics: deps.metrics,
    logger: deps.logger.child({ carrier: info.carrier }),
    events: deps.events,
    downlink,
    maxEarlyAudioBytes: materials.maxEarlyAudioBytes,
    heldAudio: materials.heldAudio,
    // The profile's own recording wins; without one the "unavailable" prompt plays.
    fallbackAudio: info.profile.fallback.audioFile
      ? fallbackAudio(info.profile.fallback.audioFile, info.mediaFormat)
      : null,
    ...(deps.prompts ? { prompts: deps.prompts } : {}),
    ...(deps.voicemailRecordings ? { voicemailRecordings: deps.voicemailRecordings } : {}),
    ...(recorded ? { audioListeners: [recorded.listener], recording: recorded.port } : {}),
    onEnded: (ended: CallSession, record: CallRecord) => {
      deps.registry.remove(ended);
      deps.saveRecord({ ...record, instance: config.instanceId, region: config.region });
    },
  };
}

/** The pre-warmed session for this call, if one was dialed here for the format the stream brings. */
function claimPrewarmed(
  carrier: string,
  start: StreamStart,
  deps: MediaSocketDeps,
): Promise<AgentSession | null> | undefined {
  const { metrics } = deps;
  const prewarmed = deps.prewarm.take(prewarmKey(carrier, start.callSid));
  if (!prewarmed) return undefined;
  if (!sameFormat(prewarmed.format, start.mediaFormat)) {
    metrics.prewarm.inc({ outcome: 'format_mismatch' });
    prewarmed.close();
    return undefined;
  }
  metrics.prewarm.inc({ outcome: 'used' });
  metrics.streamPrewarm.inc({ carrier, outcome: 'used' });
  return prewarmed.ready;
}

/** Makes the admitted stream's call, registers it and starts it. */
export function startCall(
  start: StreamStart,
  grant: StreamGrant,
  outbound: OutboundContext | null,
  materials: CallMaterials,
  deps: MediaSocketDeps,
): CallSession {
  const { config, metrics } = deps;
  const carrier = materials.adapter.name;
  const info = callInfo(config, carrier, start, grant, outbound);
  const session = new CallSession(info, materials.leg, callDeps(info, materials, deps));
  deps.registry.add(session);
  const prepared = grant.instance === config.instanceId;
  const prewarmed = prepared ? claimPrewarmed(carrier, start, deps) : undefined;
  if (prepared && prewarmed === undefined) metrics.streamPrewarm.inc({ carrier, outcome: 'none' });
  void session.start(prewarmed);
  const verdict = deps.verdicts?.take(carrier, start.callSid);
  if (verdict) session.onMachineVerdict(verdict);
  return session;
}
