// Answering the agent's client-side function calls on one call (docs/protocols/agent.md section 7):
// each is run (functions.ts), the agent updates it asks for are applied and acknowledged first, the
// call is counted, logged and published, and the agent gets its answer. Ending or transferring
// the call is the session's: the built-ins only ask for it.
import type { Logger } from 'pino';
import type { AgentClientMessage, FunctionCallEntry } from '../../agent/protocol.js';
import type { AgentUpdater } from '../../agent/updates.js';
import type { AgentProfile } from '../../config/types.js';
import type { Metrics } from '../../metrics/metrics.js';
import type { CallLog } from '../record/call-log.js';
import type { CallEventHub } from '../watch/events.js';
import { functionLabel, runFunction } from './functions.js';
import type { RecordingControlResult } from '../recording-port.js';

export interface FunctionCallsOptions {
  call: { callSid: string; from: string; to: string; profileName: string; profile: AgentProfile };
  /** Whether the carrier can redirect this call. */
  canTransfer: boolean;
  log: Pick<CallLog, 'elapsedMs' | 'functionCall'>;
  metrics: Pick<Metrics, 'agentUpdates' | 'functionCalls' | 'functionDuration'>;
  events: Pick<CallEventHub, 'publish'>;
  logger: Logger;
  updater: Pick<AgentUpdater, 'request'>;
  /** To the agent (its link). */
  send(message: AgentClientMessage): void;
  /** `end_call`: end once the agent's goodbye was heard. */
  endAfterReply(): void;
  /** `transfer_call`: move the call once the agent's last words were heard. */
  transferAfterReply(target: string): void;
  /** `pause_recording` / `resume_recording`, on a recorded call. */
  recording?(action: 'pause' | 'resume'): RecordingControlResult;
}

export class FunctionCalls {
  readonly #opts: FunctionCallsOptions;

  constructor(opts: FunctionCallsOptions) {
    this.#opts = opts;
  }

  /** Every client-side entry of a `FunctionCallRequest` is answered; the rest are the agent's own. */
  request(functions: unknown): void {
    for (const entry of Array.isArray(functions) ? (functions as FunctionCallEntry[]) : []) {
      if (entry?.client_side) void this.answer(entry);
    }
  }

  async answer(entry: FunctionCallEntry): Promise<void> {
    const { call, log, metrics, events, logger } = this.#opts;
    const askedAtMs = log.elapsedMs();
    const result = await runFunction(entry, {
      ...call,
      canTransfer: this.#opts.canTransfer,
      endCall: () => this.#opts.endAfterReply(),
      transfer: (target) => this.#opts.transferAfterReply(target),
      ...(this.#opts.recording ? { recording: this.#opts.recording } : {}),
    });
    // Updates go first, each awaited (bounded), so the reply that follows has the new voice.
    for (const update of result.updates ?? []) {
      const outcome = await this.#opts.updater.request(update);
      metrics.agentUpdates.inc({ type: update.type, outcome });
      logger.info({ update: update.type, outcome, function: entry.name }, 'agent updated by a function');
    }
    const label = functionLabel(entry.name, call.profile);
    metrics.functionCalls.inc({ function: label, outcome: result.outcome });
    metrics.functionDuration.observe({ function: label, outcome: result.outcome }, result.durationMs / 1000);
    log.functionCall({
      name: String(entry.name),
      arguments: String(entry.arguments ?? ''),
      outcome: result.outcome,
      durationMs: result.durationMs,
      atMs: askedAtMs,
      response: result.content,
      ...(typeof entry.id === 'string' ? { id: entry.id } : {}),
      ...(typeof entry.thought_signature === 'string' ? { thoughtSignature: entry.thought_signature } : {}),
    });
    events.publish(call.callSid, { type: 'function', name: entry.name, outcome: result.outcome });
    this.#opts.send({
      type: 'FunctionCallResponse',
      id: entry.id,
      name: entry.name,
      content: result.content,
    });
  }
}
