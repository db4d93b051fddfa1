import { describe, expect, it } from 'vitest';
import { RecentIds } from '../../src/carriers/recent-ids.js';

describe('recent ids', () => {
  it('notices an id seen within its time, and forgets it after', () => {
    let now = 1_000;
    const ids = new RecentIds({ ttlMs: 100, maxEntries: 10, now: () => now });
    expect(ids.seen('a')).toBe(false);
    expect(ids.seen('a')).toBe(true);
    now += 99;
    expect(ids.seen('a')).toBe(true);
    now += 1;
    expect(ids.seen('a')).toBe(false);
  });

  it('holds at most its bound, forgetting the oldest first', () => {
    const ids = new RecentIds({ ttlMs: 60_000, maxEntries: 3, now: () => 0 });
    for (const id of ['a', 'b', 'c', 'd']) ids.seen(id);
    expect(ids.size).toBe(3);
    expect(ids.seen('d')).toBe(true);
    expect(ids.seen('a')).toBe(false);
  });

  it('drops expired entries as time passes, so memory follows the traffic', () => {
    let now = 0;
    const ids = new RecentIds({ ttlMs: 10, maxEntries: 1000, now: () => now });
    for (let i = 0; i < 100; i++) ids.seen(`id-${i}`);
    now = 11;
    ids.seen('fresh');
    expect(ids.size).toBe(1);
  });

  it('can forget an id on purpose', () => {
    const ids = new RecentIds({ ttlMs: 60_000, maxEntries: 10, now: () => 0 });
    ids.seen('a');
    ids.forget('a');
    expect(ids.seen('a')).toBe(false);
  });
});
