// The `History` a redialed agent is given in `agent.context.messages` (docs/protocols/agent.md,
// History): the conversation as the caller heard it, and the function calls already made with what
// they returned, in the order they happened, so the new session neither repeats a call nor forgets
// its answer. Pure: the call's log hands in its turns and function calls.
import type { HistoryFunctionCall, HistoryMessage } from './protocol.js';

/** A turn of the call, as the call log keeps it. */
export interface HistoryTurn {
  role: 'user' | 'assistant';
  /** For the assistant: what the caller heard. */
  content: string;
  /** Milliseconds since the call started. */
  atMs: number;
}

/** A function call the bridge answered, as the call log keeps it. */
export interface HistoryCall {
  /** The request's id; calls recorded without one get a stable stand-in. */
  id?: string;
  name: string;
  arguments: string;
  /** What the bridge answered (`FunctionCallResponse.content`). */
  response?: string;
  outcome: string;
  thoughtSignature?: string;
  atMs: number;
}

/** Newest entries kept: the agent's context has a size, and the latest part matters most. */
export const MAX_HISTORY_MESSAGES = 100;
/** A function's answer is cut to this many characters in History. */
export const MAX_HISTORY_RESPONSE_CHARS = 4096;

export function buildHistory(
  turns: readonly HistoryTurn[],
  calls: readonly HistoryCall[] = [],
): HistoryMessage[] {
  type Entry = { atMs: number; order: number } & (
    { kind: 'turn'; turn: HistoryTurn } | { kind: 'call'; call: HistoryFunctionCall }
  );
  const entries: Entry[] = [];
  turns.forEach((turn, i) => {
    if (turn.content.trim() !== '') entries.push({ kind: 'turn', turn, atMs: turn.atMs, order: i });
  });
  calls.forEach((call, i) => {
    entries.push({ kind: 'call', call: historyCall(call, i), atMs: call.atMs, order: turns.length + i });
  });
  // Time order; at one instant, a turn before the calls it led to.
  entries.sort((a, b) => a.atMs - b.atMs || a.order - b.order);

  const messages: HistoryMessage[] = [];
  for (const entry of entries) {
    if (entry.kind === 'turn') {
      messages.push({ type: 'History', role: entry.turn.role, content: entry.turn.content });
      continue;
    }
    // Calls with no turn between them were one request: they travel as one message.
    const last = messages.at(-1);
    if (last && 'function_calls' in last) last.function_calls.push(entry.call);
    else messages.push({ type: 'History', function_calls: [entry.call] });
  }
  return messages.slice(-MAX_HISTORY_MESSAGES);
}

function historyCall(call: HistoryCall, index: number): HistoryFunctionCall {
  const response = call.response ?? JSON.stringify({ outcome: call.outcome });
  const entry: HistoryFunctionCall = {
    id: call.id ?? `fc_history_${index + 1}`,
    name: call.name,
    client_side: true,
    arguments: call.arguments,
    response:
      response.length > MAX_HISTORY_RESPONSE_CHARS ? response.slice(0, MAX_HISTORY_RESPONSE_CHARS) : response,
  };
  if (call.thoughtSignature !== undefined) entry.thought_signature = call.thoughtSignature;
  return entry;
}
