// What a simulated call reports as it goes: the phone's own observations (stream, playout, marks,
// hang-up) and the server's observer feed (transcripts, functions, end), each stamped with the
// milliseconds since the media stream started.
import type { SpeakReason } from './greeting-wait.js';

export type CallEvent =
  | { type: 'stream-started'; atMs: number; streamSid: string; parameters: Record<string, string> }
  /** The phone's speaker went from silence to agent audio. */
  | { type: 'agent-audio-started'; atMs: number }
  /** The speaker fell silent again; `playedMs` is how much agent audio this stretch played. */
  | { type: 'agent-audio-stopped'; atMs: number; playedMs: number }
  /** The server sent `clear` (a barge-in): `droppedMs` of queued audio was never played. */
  | { type: 'clear'; atMs: number; droppedMs: number }
  /** A mark went back to the server; `flushed` when a clear released it before its audio played. */
  | { type: 'mark-echoed'; atMs: number; name: string; flushed: boolean }
  /** The server closed the media stream: the call ended from its side. */
  | { type: 'hangup'; atMs: number; code: number; reason: string; unplayedMs: number }
  /** The caller's audio begins: after the greeting, or at once when not waiting for one. */
  | { type: 'caller-started-speaking'; atMs: number; reason: SpeakReason }
  | { type: 'caller-audio-done'; atMs: number; sentMs: number }
  | {
      type: 'transcript';
      atMs: number;
      role: 'user' | 'assistant';
      content: string;
      interrupted: boolean;
    }
  | { type: 'barge-in'; atMs: number }
  | { type: 'function'; atMs: number; name: string; outcome: string }
  | { type: 'end'; atMs: number; reason: string }
  /** The voice webhook answered without a media stream. */
  | { type: 'declined'; atMs: number; say: string }
  /** The server did something a real carrier would reject or ignore; the call goes on. */
  | { type: 'warning'; atMs: number; message: string };

export type CallEventType = CallEvent['type'];

/** Milliseconds of 8 kHz μ-law audio in a byte count. */
export function mulawMs(bytes: number): number {
  return bytes / 8;
}

/** An event as reported, before the log stamps its time. */
export type CallEventInput = WithoutTime<CallEvent>;
type WithoutTime<E> = E extends unknown ? Omit<E, 'atMs'> : never;

export interface CallEventLog {
  readonly events: CallEvent[];
  emit(event: CallEventInput): void;
  /** Reports a server misstep once per distinct message, however often it repeats. */
  warnOnce(message: string): void;
  /** Time zero of every event: the moment the media stream started. */
  markStreamStart(): void;
  elapsedMs(): number;
}

export function createEventLog(onEvent?: (event: CallEvent) => void): CallEventLog {
  const events: CallEvent[] = [];
  const warned = new Set<string>();
  let streamStartedAt: number | undefined;
  const elapsedMs = (): number =>
    streamStartedAt === undefined ? 0 : Math.round(performance.now() - streamStartedAt);
  const emit = (event: CallEventInput): void => {
    const stamped = { ...event, atMs: elapsedMs() } as CallEvent;
    events.push(stamped);
    onEvent?.(stamped);
  };
  return {
    events,
    emit,
    warnOnce(message: string): void {
      if (warned.has(message)) return;
      warned.add(message);
      emit({ type: 'warning', message });
    },
    markStreamStart(): void {
      streamStartedAt = performance.now();
    },
    elapsedMs,
  };
}
