// A call's timeline from its record (docs/console.md "A call's page"): the transcript's turns, the
// barge-ins, DTMF digits, function calls, each reply's latency, and the end with its reason, in
// call time. Pure, so it is tested without a browser.
import type { CallDetail, CallEvent } from './types.js';

export type TimelineItem =
  | {
      kind: 'turn';
      atMs: number;
      role: 'caller' | 'agent';
      text: string;
      interrupted: boolean;
      latencyMs?: number;
    }
  | { kind: 'barge-in'; atMs: number }
  | { kind: 'dtmf'; atMs: number; digits: string }
  | { kind: 'function'; atMs: number; name: string; arguments: string; outcome: string; durationMs: number }
  | { kind: 'event'; atMs: number; label: string }
  | { kind: 'end'; atMs: number; reason: string; outcome: string };

/** Event types the call log may hold beside the turns, and how they read. */
function fromEvent(event: CallEvent): TimelineItem | null {
  const type = event.type.toLowerCase();
  if (type === 'dtmf') {
    const digits = event.digits ?? event.digit;
    return { kind: 'dtmf', atMs: event.atMs, digits: typeof digits === 'string' ? digits : '?' };
  }
  if (type === 'barge-in' || type === 'barge_in' || type === 'bargein')
    return { kind: 'barge-in', atMs: event.atMs };
  // Turns and function calls come from their own lists; the end from the record's fields.
  if (['turn', 'function_call', 'end', 'transcript'].includes(type)) return null;
  return { kind: 'event', atMs: event.atMs, label: event.type };
}

export function timelineOf(record: CallDetail): TimelineItem[] {
  const items: TimelineItem[] = [];
  // The k-th reply that answers a caller's turn has the k-th perceived latency.
  const perceived = record.latency?.perceivedMs ?? [];
  let replies = 0;
  let previousRole: string | null = null;
  for (const turn of record.turns ?? []) {
    const role = turn.role === 'user' ? 'caller' : 'agent';
    let latencyMs: number | undefined;
    if (role === 'agent' && previousRole === 'user') {
      latencyMs = perceived[replies];
      replies += 1;
    }
    items.push({
      kind: 'turn',
      atMs: turn.atMs,
      role,
      text: turn.content,
      interrupted: turn.interrupted,
      latencyMs,
    });
    previousRole = turn.role;
    // A barge-in is the caller speaking over a reply: the interrupted turn marks it when the log has no event for it.
    if (turn.interrupted && !(record.events ?? []).some((e) => /barge/i.test(e.type))) {
      items.push({ kind: 'barge-in', atMs: turn.atMs + (turn.heardMs ?? 0) });
    }
  }
  for (const call of record.functionCalls ?? []) {
    items.push({
      kind: 'function',
      atMs: call.atMs,
      name: call.name,
      arguments: call.arguments,
      outcome: call.outcome,
      durationMs: call.durationMs,
    });
  }
  for (const event of record.events ?? []) {
    const item = fromEvent(event);
    if (item) items.push(item);
  }
  items.push({ kind: 'end', atMs: record.durationMs, reason: record.endReason, outcome: record.outcome });
  // Stable: items at the same moment keep the order above (a turn before its barge-in).
  return items
    .map((item, index) => ({ item, index }))
    .sort((a, b) => a.item.atMs - b.item.atMs || a.index - b.index)
    .map(({ item }) => item);
}

/** Where each turn sits in the recording, in seconds, for the waveform's markers. */
export function turnMarkers(
  record: CallDetail,
): { startS: number; endS: number; role: 'caller' | 'agent'; text: string }[] {
  const turns = record.turns ?? [];
  return turns.map((turn, index) => {
    const next = turns[index + 1];
    if (turn.role === 'user') {
      // The caller's turn spans from when they began speaking to its transcript, on their channel;
      // without the start (older records) it is a mark where it was heard.
      const fromMs = Math.min(turn.spokeFromMs ?? turn.atMs, turn.atMs);
      return { startS: fromMs / 1000, endS: turn.atMs / 1000, role: 'caller', text: turn.content };
    }
    const spoken = turn.heardMs ?? turn.sentMs;
    // A reply's (or the consent prompt's) heard length makes it a span on the heard channel.
    const endMs = spoken !== undefined ? Math.min(turn.atMs + spoken, next?.atMs ?? Infinity) : turn.atMs;
    return {
      startS: turn.atMs / 1000,
      endS: Math.max(turn.atMs, endMs) / 1000,
      role: 'agent',
      text: turn.content,
    };
  });
}
