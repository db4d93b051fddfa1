// The capacity guard: MAX_CALLS is a ceiling; agent refusals lower it for a while.
import { describe, expect, it } from 'vitest';
import { AdmissionControl } from '../../../src/call/intake/admission.js';

function control(maxCalls = 10) {
  let now = 0;
  const changes: number[] = [];
  const admission = new AdmissionControl({
    maxCalls,
    recoverEveryMs: 1000,
    nowMs: () => now,
    onChange: (limit) => changes.push(limit),
  });
  return { admission, changes, advance: (ms: number) => (now += ms) };
}

describe('admission control', () => {
  it('admits up to MAX_CALLS', () => {
    const { admission } = control(3);
    expect(admission.admits(2)).toBe(true);
    expect(admission.admits(3)).toBe(false);
  });

  it('admits fewer calls after the agent refuses, and recovers one call per interval', () => {
    const { admission, changes, advance } = control(10);
    admission.refused(8);
    expect(admission.current()).toBe(7);
    expect(admission.admits(7)).toBe(false);
    advance(2500);
    expect(admission.current()).toBe(9);
    advance(5000);
    expect(admission.current()).toBe(10);
    expect(changes).toEqual([7, 9, 10]);
  });

  it('never drops below one call', () => {
    const { admission } = control(10);
    admission.refused(0);
    expect(admission.current()).toBe(1);
    expect(admission.admits(0)).toBe(true);
  });

  it('keeps lowering while refusals continue', () => {
    const { admission } = control(100);
    admission.refused(50);
    admission.refused(45);
    expect(admission.current()).toBe(40);
  });
});
