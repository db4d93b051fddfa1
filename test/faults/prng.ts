// A small seeded PRNG (mulberry32) so a failing fuzz run can be replayed from its printed seed.
import { randomInt } from 'node:crypto';

export interface Rng {
  readonly seed: number;
  /** Uniform in [0, 1). */
  next(): number;
  /** Integer in [min, max]. */
  int(min: number, max: number): number;
  chance(p: number): boolean;
  pick<T>(items: readonly T[]): T;
  bytes(length: number): Buffer;
}

/** The seed from `FUZZ_SEED` when set, else a fresh random one. */
export function seedFromEnv(env: Record<string, string | undefined> = process.env): number {
  const given = env.FUZZ_SEED;
  if (given !== undefined && /^\d+$/.test(given)) return Number(given) >>> 0;
  return randomInt(0, 2 ** 32);
}

export function createRng(seed: number): Rng {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (min: number, max: number) => min + Math.floor(next() * (max - min + 1));
  return {
    seed,
    next,
    int,
    chance: (p) => next() < p,
    pick: (items) => {
      if (items.length === 0) throw new Error('pick from an empty list');
      return items[int(0, items.length - 1)]!;
    },
    bytes: (length) => {
      const out = Buffer.allocUnsafe(length);
      for (let i = 0; i < length; i++) out[i] = int(0, 255);
      return out;
    },
  };
}
