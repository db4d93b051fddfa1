// Client-side functions the agent may call on a call (docs/protocols/agent.md section 7: every
// `client_side: true` entry of a `FunctionCallRequest` is answered by `id`). Built-ins end or
// transfer the call; HTTP functions from the profile are posted to their URL. Every path answers
// the agent, so no call waits on a function that went wrong.
import type { AgentUpdateMessage, FunctionCallEntry } from '../../agent/protocol.js';
import { declaredFunctions } from '../../agent/settings.js';
import { readUpdateRequest } from '../../agent/updates.js';
import type { AgentProfile } from '../../config/types.js';
import { runHttpFunction } from './http-function.js';
import type { RecordingControlResult } from '../recording-port.js';

export interface FunctionContext {
  callSid: string;
  from: string;
  to: string;
  profileName: string;
  profile: AgentProfile;
  /** Whether the carrier can redirect this call (an API with credentials). */
  canTransfer: boolean;
  /** Starts the polite end of the call once the agent's goodbye has been heard. */
  endCall(): void;
  /** Redirects the call to `target` once the agent's last words have been heard. */
  transfer(target: string): void;
  /** Pauses or resumes the call's recording (docs/recordings.md); absent: the call is not recorded. */
  recording?(action: 'pause' | 'resume'): RecordingControlResult;
}

export interface FunctionResult {
  content: string;
  outcome: string;
  durationMs: number;
  /** Agent updates the answer asked for (src/agent/updates.ts): send each, await its ack, then answer. */
  updates?: AgentUpdateMessage[];
}

const json = (value: unknown) => JSON.stringify(value);

/** Declared to the agent on recorded calls (agent/settings.ts). */
export const RECORDING_FUNCTIONS: readonly string[] = ['pause_recording', 'resume_recording'];

function parseTarget(argumentsJson: string): string | null {
  try {
    const args = JSON.parse(argumentsJson) as { target?: unknown };
    return typeof args?.target === 'string' ? args.target.trim() : null;
  } catch {
    return null;
  }
}

export async function runFunction(entry: FunctionCallEntry, ctx: FunctionContext): Promise<FunctionResult> {
  const started = performance.now();
  const done = (content: string, outcome: string): FunctionResult => ({
    content,
    outcome,
    durationMs: Math.round(performance.now() - started),
  });
  const { profile } = ctx;

  if (entry.name === 'end_call' && profile.builtins.endCall) {
    ctx.endCall();
    return done(json({ ok: true, note: 'The call will end after your goodbye has played.' }), 'ok');
  }

  if (entry.name === 'transfer_call' && profile.builtins.transferAllowList.length > 0) {
    const target = parseTarget(entry.arguments);
    if (!target || !profile.builtins.transferAllowList.includes(target)) {
      return done(
        json({
          error: `transfer to ${target ?? '(no target)'} is not allowed`,
          allowed: profile.builtins.transferAllowList,
          hint: 'Tell the caller you cannot transfer them there.',
        }),
        'refused',
      );
    }
    if (!ctx.canTransfer) {
      return done(
        json({
          error: 'transfers are not available on this line',
          hint: 'Tell the caller you cannot transfer them.',
        }),
        'unavailable',
      );
    }
    ctx.transfer(target);
    return done(
      json({ ok: true, note: `The caller will be connected to ${target} after you finish speaking.` }),
      'ok',
    );
  }

  if ((entry.name === 'pause_recording' || entry.name === 'resume_recording') && profile.recording?.enabled) {
    const action = entry.name === 'pause_recording' ? 'pause' : 'resume';
    const result = ctx.recording?.(action) ?? 'not_recorded';
    if (result === 'not_recorded') {
      return done(json({ error: 'this call is not being recorded' }), 'unavailable');
    }
    const note =
      result === 'done'
        ? action === 'pause'
          ? 'The recording is paused.'
          : 'The recording has resumed.'
        : `The recording was already ${action === 'pause' ? 'paused' : 'running'}.`;
    return done(json({ ok: true, note }), 'ok');
  }

  const fn = profile.httpFunctions.find((f) => f.name === entry.name);
  if (fn) {
    const result = await runHttpFunction(
      fn,
      { callSid: ctx.callSid, from: ctx.from, to: ctx.to, profile: ctx.profileName },
      entry.arguments ?? '{}',
    );
    if (result.outcome !== 'ok')
      return { content: result.content, outcome: result.outcome, durationMs: result.durationMs };
    const request = readUpdateRequest(result.content, fn.mayUpdate ?? [], {
      prompt: profile.prompt,
      functions: declaredFunctions(profile),
    });
    return {
      content: request.content,
      outcome: result.outcome,
      durationMs: result.durationMs,
      ...(request.updates.length > 0 ? { updates: request.updates } : {}),
    };
  }

  return done(json({ error: `function ${entry.name} is not available on this call` }), 'unknown');
}

/** A function name as a metric label: only names the profile declares, so the label stays bounded. */
export function functionLabel(name: string, profile: AgentProfile): string {
  if (RECORDING_FUNCTIONS.includes(name) || name === 'end_call' || name === 'transfer_call') return name;
  return profile.httpFunctions.some((f) => f.name === name) ? name : 'unknown';
}
