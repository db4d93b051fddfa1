// The end of a voicemail greeting judged from the audio, for carriers that report no beep: only a
// greeting that was heard ends, and only once it has fallen silent long enough.
import { describe, expect, it } from 'vitest';
import { GREETING_END_SILENCE_MS, GreetingEnd } from '../../../src/call/outbound/greeting-end.js';

describe('GreetingEnd', () => {
  it('ends a greeting that was heard once its silence lasts long enough', () => {
    const end = new GreetingEnd();
    expect(end.observe(true, 0)).toBe(false);
    expect(end.observe(false, GREETING_END_SILENCE_MS - 1)).toBe(false);
    expect(end.observe(false, GREETING_END_SILENCE_MS)).toBe(true);
  });

  it('does not end a greeting never heard, however long the silence', () => {
    const end = new GreetingEnd();
    expect(end.observe(false, 10 * GREETING_END_SILENCE_MS)).toBe(false);
  });

  it('waits again when the answerer speaks after a pause shorter than the limit', () => {
    const end = new GreetingEnd();
    end.observe(true, 0);
    expect(end.observe(false, GREETING_END_SILENCE_MS / 2)).toBe(false);
    expect(end.observe(true, 0)).toBe(false);
    expect(end.observe(false, GREETING_END_SILENCE_MS / 2)).toBe(false);
  });
});
