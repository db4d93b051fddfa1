// Live calls across a fleet sharing Redis: listed from the live-call directory, controlled on
// whichever instance carries the call (here directly, elsewhere relayed to it).
import type { ControlOutcome, LiveCalls } from '../call/watch/live-call.js';
import type { LiveDirectory } from './live-directory.js';
import type { FleetRelay, Reply, RequestBody } from './relay.js';

export interface FleetCallsDeps {
  local: LiveCalls;
  directory: LiveDirectory;
  relay: FleetRelay;
  instance: string;
  controlTimeoutMs: number;
}

function outcomeOf(reply: Reply | null, instance: string): ControlOutcome {
  if (reply === null) {
    return { ok: false, reason: 'unreachable', message: `instance ${instance} did not answer in time` };
  }
  if (reply.ok) return { ok: true, instance };
  const reason = reply.reason === 'not_found' || reply.reason === 'refused' ? reply.reason : 'unreachable';
  return { ok: false, reason, message: reply.message ?? `instance ${instance} could not act on the call` };
}

export function fleetLiveCalls(deps: FleetCallsDeps): LiveCalls {
  /** The call's instance per the directory, when it is not this one. */
  const ownerElsewhere = async (callSid: string): Promise<string | null> => {
    const entry = (await deps.directory.list()).find((call) => call.callSid === callSid);
    return entry && entry.instance !== deps.instance ? entry.instance : null;
  };
  const control = async (
    callSid: string,
    here: () => Promise<ControlOutcome>,
    body: RequestBody,
  ): Promise<ControlOutcome> => {
    const local = await here();
    if (local.ok || local.reason !== 'not_found') return local;
    let owner: string | null;
    try {
      owner = await ownerElsewhere(callSid);
    } catch {
      return {
        ok: false,
        reason: 'unreachable',
        message: 'the live-call directory cannot be read right now',
      };
    }
    if (owner === null) return local;
    return outcomeOf(await deps.relay.request(owner, body, deps.controlTimeoutMs), owner);
  };
  return {
    list: () => deps.directory.list(),
    hangup: (callSid) => control(callSid, () => deps.local.hangup(callSid), { type: 'hangup', callSid }),
    transfer: (callSid, target) =>
      control(callSid, () => deps.local.transfer(callSid, target), { type: 'transfer', callSid, target }),
    recording: (callSid, action) =>
      control(callSid, () => deps.local.recording(callSid, action), { type: 'recording', callSid, action }),
  };
}
