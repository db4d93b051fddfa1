// The media stream's phase table on its own: the only moves a stream makes, and that a move the
// table does not hold throws instead of leaving a stream in a phase its handlers do not expect.
import { describe, expect, it } from 'vitest';
import { STREAM_TRANSITIONS, nextStreamPhase } from '../../../src/call/stream/media-socket.js';

describe('media stream phases', () => {
  it('goes awaiting_start → verifying → live → stopped, and may stop from any phase', () => {
    expect(nextStreamPhase('awaiting_start', 'verifying')).toBe('verifying');
    expect(nextStreamPhase('verifying', 'live')).toBe('live');
    expect(nextStreamPhase('live', 'stopped')).toBe('stopped');
    for (const from of ['awaiting_start', 'verifying', 'live', 'stopped'] as const) {
      expect(nextStreamPhase(from, 'stopped')).toBe('stopped');
    }
  });

  it('refuses every other move: no going back, no skipping the token check, nothing after stopped', () => {
    expect(() => nextStreamPhase('awaiting_start', 'live')).toThrow(
      'cannot move from awaiting_start to live',
    );
    expect(() => nextStreamPhase('live', 'verifying')).toThrow();
    expect(() => nextStreamPhase('verifying', 'awaiting_start')).toThrow();
    expect(() => nextStreamPhase('stopped', 'live')).toThrow();
    expect(() => nextStreamPhase('stopped', 'verifying')).toThrow();
  });

  it('is frozen', () => {
    expect(Object.isFrozen(STREAM_TRANSITIONS)).toBe(true);
  });
});
