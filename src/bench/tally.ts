// What one run carried, call by call: each side's sent bytes matched with what the other side
// received (lost, reordered, damaged), barge-ins matched with the clears they caused, and why a
// call failed.
import type { AgentReport, CarrierReport, Plan } from './ipc.js';
import type { TargetResult } from './run.js';
import { summarize } from './samples.js';

type Tally = Omit<
  TargetResult,
  | 'serverCpuPerCallPct'
  | 'serverRssPerCallKB'
  | 'server'
  | 'loadGenerators'
  | 'setupMs'
  | 'lateStarts'
  | 'clockSkewMs'
>;

/** Matches what each side sent with what the other received, call by call. */
export function tally(calls: number, carrier: CarrierReport, agent: AgentReport, plan: Plan): Tally {
  const agentCalls = new Map(agent.calls.map((c) => [c.call, c]));
  const failures: Record<string, number> = {};
  const bargeIns: number[] = [];
  let failedCalls = 0;
  const t = {
    uplinkSentBytes: 0,
    uplinkReceivedBytes: 0,
    downlinkSentBytes: 0,
    downlinkReceivedBytes: 0,
    replies: 0,
    bargeIns: 0,
    clears: 0,
    marksEchoed: 0,
    agentConnections: agent.connections,
    agentConnectionsWithoutAudio: agent.connectionsWithoutAudio,
  };
  let bytesLost = 0;
  let bytesLostInFailedCalls = 0;
  let bytesReordered = 0;
  let bytesCorrupt = 0;
  for (const c of carrier.calls) {
    const a = agentCalls.get(c.call);
    const upReceived = a ? a.upInOrderBytes + a.upReorderedBytes : 0;
    const downSent = a?.downSentBytes ?? 0;
    const downReceived = c.downInOrderBytes + c.downReorderedBytes;
    t.uplinkSentBytes += c.upSentBytes;
    t.uplinkReceivedBytes += upReceived;
    t.downlinkSentBytes += downSent;
    t.downlinkReceivedBytes += downReceived;
    t.clears += c.clearsAtMs.length;
    t.marksEchoed += c.marksEchoed;
    const lost = Math.max(0, c.upSentBytes - upReceived) + Math.max(0, downSent - downReceived);
    bytesLost += lost;
    bytesReordered += (a?.upReorderedBytes ?? 0) + c.downReorderedBytes;
    // A tail that never completed a frame is damage too (it is already missing from the received count).
    bytesCorrupt +=
      (a ? a.upCorruptBytes + a.upDuplicateBytes + a.upPendingBytes : 0) +
      c.downCorruptBytes +
      c.downDuplicateBytes +
      c.downPendingBytes;
    const sentBargeIns = a?.bargeInsAtMs ?? [];
    t.bargeIns += sentBargeIns.length;
    t.replies += a?.replies ?? 0;
    sentBargeIns.forEach((sentAtMs, k) => {
      const clearedAtMs = c.clearsAtMs[k];
      if (clearedAtMs !== undefined && sentAtMs >= plan.windowStartMs && sentAtMs < plan.windowEndMs) {
        bargeIns.push(clearedAtMs - sentAtMs);
      }
    });
    let failure = c.failure;
    if (failure === null && !a) failure = "the agent never received the call's audio";
    if (failure === null && sentBargeIns.length > c.clearsAtMs.length) failure = 'a barge-in got no clear';
    if (failure === null && sentBargeIns.length < c.clearsAtMs.length) failure = 'a clear without a barge-in';
    if (failure !== null) {
      failedCalls++;
      bytesLostInFailedCalls += lost;
      const reason = failure.slice(0, 160);
      failures[reason] = (failures[reason] ?? 0) + 1;
    }
  }
  // Bytes the agent could not charge to any call never reached a verifier: already lost above.
  return {
    completedCalls: calls - failedCalls,
    failedCalls,
    failures,
    uplinkLatencyMs: agent.uplinkLatencyMs,
    downlinkLatencyMs: carrier.downlinkLatencyMs,
    bargeInMs: summarize(bargeIns),
    bytesLost,
    bytesLostInFailedCalls,
    bytesReordered,
    bytesCorrupt,
    traffic: t,
  };
}
