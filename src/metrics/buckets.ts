/** Histogram buckets, in seconds, for latencies from a few milliseconds to ten seconds. */
export const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10];
