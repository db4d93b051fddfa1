// The directory's beats and the live feed's reads run one at a time: asked for while one is in
// flight, a run happens once more right after it, however many asked meanwhile.
import { describe, expect, it } from 'vitest';
import { CoalescedRun } from '../../src/fleet/coalesced-run.js';

describe('CoalescedRun', () => {
  it('runs once more after the run in flight, however many asked meanwhile', async () => {
    const releases: Array<() => void> = [];
    let runs = 0;
    const run = new CoalescedRun(() => {
      runs += 1;
      return new Promise<void>((resolve) => releases.push(resolve));
    });
    expect(run.inFlight).toBeNull();
    const first = run.run();
    const second = run.run();
    void run.run();
    // Those asked for while the first ran share it.
    expect(second).toBe(first);
    expect(run.inFlight).toBe(first);
    expect(runs).toBe(1);
    releases[0]!();
    await first;
    await expect.poll(() => runs).toBe(2);
    const rerun = run.inFlight;
    expect(rerun).not.toBeNull();
    releases[1]!();
    await rerun;
    expect(run.inFlight).toBeNull();
    expect(runs).toBe(2);
  });

  it('runs again after a failed run, and hands the failure to those that waited on it', async () => {
    let runs = 0;
    const run = new CoalescedRun(async () => {
      runs += 1;
      if (runs === 1) throw new Error('Redis away');
    });
    await expect(run.run()).rejects.toThrow('Redis away');
    await run.run();
    expect(runs).toBe(2);
  });
});
