import { describe, expect, it } from 'vitest';
import { inMemoryClaimOnce } from '../../src/carriers/replay-guard.js';

describe('in-memory claimOnce', () => {
  it('claims a key once while it stands, and again once it has expired', async () => {
    let now = 1_000;
    const claimOnce = inMemoryClaimOnce(() => now);
    expect(await claimOnce('a', 600_000)).toBe(true);
    expect(await claimOnce('a', 600_000)).toBe(false);
    expect(await claimOnce('b', 600_000)).toBe(true);
    now += 599_999;
    expect(await claimOnce('a', 600_000)).toBe(false);
    now += 1;
    expect(await claimOnce('a', 600_000)).toBe(true);
  });

  it('stays bounded however many keys arrive, forgetting the oldest first', async () => {
    const claimOnce = inMemoryClaimOnce(() => 0);
    for (let i = 0; i < 50_010; i++) await claimOnce(`k${i}`, 600_000);
    // The oldest were dropped to make room; the newest are still remembered.
    expect(await claimOnce('k0', 600_000)).toBe(true);
    expect(await claimOnce('k50009', 600_000)).toBe(false);
  });
});
