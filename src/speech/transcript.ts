// The text an analysis reads: the call's turns as a plain dialogue, what the caller said and what
// they heard, bounded. A transcript past the bound keeps its opening and its close, where a
// summary's substance usually is, and says that it was cut.

export interface DialogueTurn {
  role: 'user' | 'assistant';
  /** For the assistant: what the caller heard. */
  content: string;
}

const SPEAKER = { user: 'Caller', assistant: 'Agent' } as const;
const CUT_MARK = '\n[…]\n';

export function transcriptText(
  turns: readonly DialogueTurn[],
  maxChars: number,
): { text: string; truncated: boolean } {
  const lines = turns
    .map((turn) => ({
      speaker: SPEAKER[turn.role] ?? 'Agent',
      content: turn.content.replace(/\s+/g, ' ').trim(),
    }))
    .filter((line) => line.content !== '')
    .map((line) => `${line.speaker}: ${line.content}`);
  const text = lines.join('\n');
  if (text.length <= maxChars) return { text, truncated: false };
  const keep = Math.max(0, maxChars - CUT_MARK.length);
  const head = Math.ceil(keep / 2);
  return {
    text: `${text.slice(0, head)}${CUT_MARK}${text.slice(text.length - (keep - head))}`,
    truncated: true,
  };
}
