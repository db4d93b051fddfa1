// Key presses grouped into entries: the terminator, the digit cap and the inter-digit timeout.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DTMF_MAX_ENTRY_DIGITS, DtmfCollector, dtmfMessage } from '../../../src/call/session/dtmf.js';

const PROFILE_DTMF = { enabled: true, interDigitTimeoutMs: 3000, terminator: '#', maxDigits: 6 };

let emitted: string[];
let collector: DtmfCollector;

function pushAll(keys: string): void {
  for (const key of keys) collector.push(key);
}

beforeEach(() => {
  vi.useFakeTimers();
  emitted = [];
  collector = new DtmfCollector(PROFILE_DTMF, (digits) => emitted.push(digits));
});

afterEach(() => {
  collector.dispose();
  vi.useRealTimers();
});

describe('DtmfCollector', () => {
  it('emits on the terminator, without it', () => {
    pushAll('1234');
    expect(emitted).toEqual([]);
    collector.push('#');
    expect(emitted).toEqual(['1234']);
    expect(collector.pending).toBe('');
  });

  it('emits nothing for a lone terminator', () => {
    collector.push('#');
    expect(emitted).toEqual([]);
  });

  it('emits when maxDigits is reached, and starts a new entry after it', () => {
    pushAll('12345678');
    expect(emitted).toEqual(['123456']);
    expect(collector.pending).toBe('78');
  });

  it('emits after the inter-digit timeout, restarted by each key', () => {
    collector.push('4');
    vi.advanceTimersByTime(2999);
    collector.push('2');
    vi.advanceTimersByTime(2999);
    expect(emitted).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(emitted).toEqual(['42']);
    vi.advanceTimersByTime(10_000);
    expect(emitted).toEqual(['42']);
  });

  it('clears the timer when the terminator ends the entry', () => {
    pushAll('9#');
    vi.advanceTimersByTime(10_000);
    expect(emitted).toEqual(['9']);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('flushes on demand and only once', () => {
    pushAll('*7');
    collector.flush();
    collector.flush();
    vi.advanceTimersByTime(10_000);
    expect(emitted).toEqual(['*7']);
  });

  it('ignores keys that are not keypad keys', () => {
    expect(collector.push('x')).toBe(false);
    expect(collector.push('12')).toBe(false);
    expect(collector.push('')).toBe(false);
    expect(collector.push('a')).toBe(true);
    collector.push('#');
    expect(emitted).toEqual(['A']);
  });

  it('drops the pending entry and its timer on dispose', () => {
    pushAll('12');
    collector.dispose();
    expect(vi.getTimerCount()).toBe(0);
    expect(collector.push('3')).toBe(false);
    vi.advanceTimersByTime(10_000);
    collector.flush();
    expect(emitted).toEqual([]);
  });

  it('without a terminator or timeout, still ends at the internal bound', () => {
    const local: string[] = [];
    const open = new DtmfCollector({ interDigitTimeoutMs: 0, terminator: '', maxDigits: 0 }, (d) =>
      local.push(d),
    );
    for (let i = 0; i < DTMF_MAX_ENTRY_DIGITS + 1; i++) open.push('#');
    expect(vi.getTimerCount()).toBe(0);
    expect(local).toEqual(['#'.repeat(DTMF_MAX_ENTRY_DIGITS)]);
    expect(open.pending).toBe('#');
  });
});

describe('dtmfMessage', () => {
  it('spaces the keys and keeps * and # as typed', () => {
    expect(dtmfMessage('1234')).toBe('The caller entered 1 2 3 4');
    expect(dtmfMessage('0*9#')).toBe('The caller entered 0 * 9 #');
  });
});
