// Latency samples kept whole (a few million doubles at most) and summarised exactly at the end.

export interface LatencySummary {
  count: number;
  /** Null when there were no samples. */
  p50: number | null;
  p99: number | null;
  max: number | null;
}

const round = (ms: number) => Math.round(ms * 100) / 100;

export class Samples {
  #data = new Float64Array(4096);
  #count = 0;

  get count(): number {
    return this.#count;
  }

  push(value: number): void {
    if (this.#count === this.#data.length) {
      const grown = new Float64Array(this.#data.length * 2);
      grown.set(this.#data);
      this.#data = grown;
    }
    this.#data[this.#count++] = value;
  }

  /** Nearest-rank percentiles, in ms rounded to 0.01. */
  summary(): LatencySummary {
    const n = this.#count;
    if (n === 0) return { count: 0, p50: null, p99: null, max: null };
    const sorted = this.#data.subarray(0, n).sort();
    const rank = (p: number) => sorted[Math.min(n - 1, Math.max(0, Math.ceil((p / 100) * n) - 1))]!;
    return {
      count: n,
      p50: round(rank(50)),
      p99: round(rank(99)),
      max: round(sorted[n - 1]!),
    };
  }
}

/** Summary of plain values (small sets: barge-ins are counted in thousands). */
export function summarize(values: Iterable<number>): LatencySummary {
  const samples = new Samples();
  for (const value of values) samples.push(value);
  return samples.summary();
}
