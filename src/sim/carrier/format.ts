// One human-readable line per call event, as `callbridge call` prints them while the call runs.
import type { CallEvent } from './events.js';
import type { SpeakReason } from './greeting-wait.js';

export function formatEvent(event: CallEvent): string {
  const at = `${(event.atMs / 1000).toFixed(2)}s`.padStart(8);
  return `${at}  ${describe(event)}`;
}

function describe(e: CallEvent): string {
  switch (e.type) {
    case 'stream-started': {
      const names = Object.keys(e.parameters);
      return label(
        'stream',
        `${e.streamSid} started${names.length ? ` (parameters: ${names.join(', ')})` : ''}`,
      );
    }
    case 'agent-audio-started':
      return label('audio', 'agent audio playing');
    case 'agent-audio-stopped':
      return label('audio', `agent audio stopped after ${seconds(e.playedMs)}`);
    case 'clear':
      // The server may clear an idle speaker when the caller starts talking: nothing was cut off.
      return label(
        'clear',
        e.droppedMs > 0
          ? `barge-in: ${seconds(e.droppedMs)} of unplayed agent audio dropped`
          : 'nothing queued to drop',
      );
    case 'mark-echoed':
      return label('mark', `${e.name}${e.flushed ? ' (released by clear)' : ''}`);
    case 'hangup': {
      const unplayed = e.unplayedMs > 0 ? `, ${seconds(e.unplayedMs)} of agent audio never played` : '';
      return label(
        'hangup',
        `server closed the stream: ${e.code}${e.reason ? ` ${e.reason}` : ''}${unplayed}`,
      );
    }
    case 'caller-started-speaking':
      return label('caller', `started speaking ${SPEAK_REASONS[e.reason]}`);
    case 'caller-audio-done':
      return label('caller', `finished speaking (${seconds(e.sentMs)} sent), holding the line`);
    case 'transcript':
      return label(
        e.role === 'assistant' ? 'agent' : 'caller',
        `${JSON.stringify(e.content)}${e.interrupted ? ' (interrupted)' : ''}`,
      );
    case 'barge-in':
      return 'barge-in';
    case 'function':
      return label('function', `${e.name} → ${e.outcome}`);
    case 'end':
      return label('end', e.reason);
    case 'declined':
      return label('declined', e.say ? JSON.stringify(e.say) : '(no message)');
    case 'warning':
      return label('warning', e.message);
  }
}

/** How each reason to start speaking reads after "started speaking". */
export const SPEAK_REASONS: Readonly<Record<SpeakReason, string>> = Object.freeze({
  'greeting-ended': 'after the greeting',
  'no-greeting': 'without a greeting (no agent audio came)',
  'wait-capped': 'over the greeting (it ran too long)',
  'no-wait': 'at once (not waiting for a greeting)',
});

function label(kind: string, text: string): string {
  return `${kind.padEnd(9)} ${text}`;
}

export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(2)}s`;
}
