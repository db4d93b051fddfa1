// What instances tell each other over pub/sub (docs/architecture.md section 8). Everything read
// off a channel is checked before it is acted on: a malformed message is dropped, never thrown.
import type { CallEvent } from '../call/watch/events.js';
import type { RecordingAction } from '../call/watch/live-call.js';

export type InboxMessage =
  | { type: 'hangup'; id: string; from: string; callSid: string }
  | { type: 'transfer'; id: string; from: string; callSid: string; target: string }
  | { type: 'recording'; id: string; from: string; callSid: string; action: RecordingAction }
  | { type: 'release_prewarm'; carrier: string; callSid: string }
  | { type: 'listen'; callSid: string }
  | { type: 'reply'; id: string; ok: boolean; reason?: string; message?: string };

export interface RelayedEvent {
  /** The instance that carries the call; observers there read its events locally. */
  origin: string;
  event: CallEvent;
}

const MAX_FIELD_CHARS = 512;

function isField(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_FIELD_CHARS;
}

function parseObject(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

export function parseInboxMessage(text: string): InboxMessage | null {
  const m = parseObject(text);
  if (!m) return null;
  switch (m.type) {
    case 'hangup':
      return isField(m.id) && isField(m.from) && isField(m.callSid)
        ? { type: 'hangup', id: m.id, from: m.from, callSid: m.callSid }
        : null;
    case 'transfer':
      return isField(m.id) && isField(m.from) && isField(m.callSid) && isField(m.target)
        ? { type: 'transfer', id: m.id, from: m.from, callSid: m.callSid, target: m.target }
        : null;
    case 'recording':
      return isField(m.id) &&
        isField(m.from) &&
        isField(m.callSid) &&
        (m.action === 'pause' || m.action === 'resume' || m.action === 'discard')
        ? { type: 'recording', id: m.id, from: m.from, callSid: m.callSid, action: m.action }
        : null;
    case 'release_prewarm':
      return isField(m.carrier) && isField(m.callSid)
        ? { type: 'release_prewarm', carrier: m.carrier, callSid: m.callSid }
        : null;
    case 'listen':
      return isField(m.callSid) ? { type: 'listen', callSid: m.callSid } : null;
    case 'reply':
      if (!isField(m.id) || typeof m.ok !== 'boolean') return null;
      return {
        type: 'reply',
        id: m.id,
        ok: m.ok,
        ...(isField(m.reason) ? { reason: m.reason } : {}),
        ...(isField(m.message) ? { message: m.message } : {}),
      };
    default:
      return null;
  }
}

const EVENT_TYPES = new Set(['transcript', 'barge-in', 'function', 'dtmf', 'end']);

export function parseRelayedEvent(text: string): RelayedEvent | null {
  const m = parseObject(text);
  if (!m || !isField(m.origin)) return null;
  const event = m.event as Record<string, unknown> | null;
  if (typeof event !== 'object' || event === null || !EVENT_TYPES.has(event.type as string)) return null;
  return { origin: m.origin, event: event as unknown as CallEvent };
}
