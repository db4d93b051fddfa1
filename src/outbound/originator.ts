// The one Originator the outbound room places calls through (ports.ts), composed from the placers
// of the enabled carriers, each implementing the originator port. Here the call to place becomes the
// context kept server-side, whose reference the call carries (src/call/outbound/outbound-context.ts), and the
// carriers' status words become the dialer's outcomes.
import type { OutboundContext, OutboundContexts } from '../call/outbound/outbound-context.js';
import { BadRequestError } from '../errors.js';
import { parseAttemptId } from '../store/campaign-records.js';
import type { DialPolicy } from '../trust/dial-policy.js';
import type {
  CallPlacer,
  CarrierCallStatus,
  OriginateRequest,
  Originator,
  OutboundCall,
  PlacedCallState,
} from './ports.js';

export interface OutboundCalls {
  originator: Originator;
  /** Places one call; resolves with the carrier and its call id. */
  place(call: OutboundCall): Promise<{ carrier: string; callSid: string }>;
  /** The carriers that can place calls here, the default first. */
  readonly carriers: readonly string[];
  /** Those among them with no answering-machine detection. */
  readonly carriersWithoutMachineDetection: readonly string[];
}

/** The carrier's status in the outbound room's words. */
export function callStatusOutcome(state: PlacedCallState): CarrierCallStatus {
  switch (state.status) {
    case 'queued':
    case 'ringing':
    case 'in-progress':
      return { state: 'live' };
    case 'completed':
      return { state: 'ended', outcome: 'completed' };
    case 'busy':
      return { state: 'ended', outcome: 'busy' };
    case 'no-answer':
      return { state: 'ended', outcome: 'no_answer' };
    case 'failed':
      return { state: 'ended', outcome: 'failed' };
    case 'canceled':
      return { state: 'ended', outcome: 'cancelled' };
    case 'unknown':
      return { state: 'unknown' };
  }
}

export function composeOriginator(
  placers: readonly CallPlacer[],
  contexts: Pick<OutboundContexts, 'keep'>,
  dialPolicy: DialPolicy,
): OutboundCalls {
  const byName = new Map(placers.map((placer) => [placer.carrier, placer]));
  const placerOf = (carrier: string | null): CallPlacer => {
    const placer = carrier === null ? placers[0] : byName.get(carrier);
    if (!placer) {
      throw new BadRequestError(
        `carrier ${JSON.stringify(carrier)} cannot place calls here; these can: ${[...byName.keys()].join(', ')}`,
      );
    }
    return placer;
  };

  const place = async (call: OutboundCall) => {
    // Checked where the number was given too; here no call reaches a carrier past the policy,
    // whatever changed since (a campaign's contacts were checked under the policy of their upload).
    dialPolicy.assert(call.to, 'to');
    if (call.from !== null) dialPolicy.assert(call.from, 'from');
    const placer = placerOf(call.carrier);
    if (call.amd !== null && !placer.detectsMachines) {
      throw new BadRequestError(
        `${placer.carrier} has no answering-machine detection: place the call with amd off (or another carrier)`,
      );
    }
    const context: OutboundContext = {
      attemptId: call.attemptId,
      campaignId: call.campaignId,
      contact: call.contact,
      profile: call.profile,
      variables: call.variables,
      amd: call.amd,
      ...(call.recording !== null ? { recording: call.recording } : {}),
    };
    // Kept before the call is placed: its first webhook may come to any instance at once.
    const ref = await contexts.keep(context, placer.carrier);
    const { callSid } = await placer.place({
      to: call.to,
      from: call.from,
      context: ref,
      detectMachine: call.amd !== null,
    });
    return { carrier: placer.carrier, callSid };
  };

  const originator: Originator = {
    async originate(request: OriginateRequest) {
      const { callSid } = await place({
        to: request.to,
        from: request.from,
        carrier: request.carrier,
        profile: request.profile,
        variables: { ...request.variables },
        amd: request.amd,
        recording: request.recording ?? null,
        attemptId: request.context,
        campaignId: request.campaignId,
        contact: parseAttemptId(request.context)?.contactSeq ?? null,
      });
      return { callSid };
    },
    async status(callSid, carrier) {
      return callStatusOutcome(await placerOf(carrier).status(callSid));
    },
    async hangup(callSid, carrier) {
      await placerOf(carrier).hangup(callSid);
    },
  };

  return {
    originator,
    place,
    carriers: placers.map((placer) => placer.carrier),
    carriersWithoutMachineDetection: placers.filter((p) => !p.detectsMachines).map((p) => p.carrier),
  };
}
