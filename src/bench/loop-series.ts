// The bench's second-by-second event-loop probe, loaded into a measured server (callbridge or a
// relay) with `node --import`, so that work which comes in bursts shows as the seconds it fires in
// rather than vanishing into one p99 over the window. Every second it appends one line to the file
// CALLBRIDGE_BENCH_LOOP_SERIES names: the second's end on this process's clock, and the delay p99
// and max beyond the probe's interval. One small synchronous append a second is its whole cost.
import { appendFileSync, readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { ownClockMs } from './frames.js';
import { LOOP_PROBE_MS, loopDelayMs } from './ipc.js';

export const LOOP_SERIES_ENV = 'CALLBRIDGE_BENCH_LOOP_SERIES';
const SECOND_MS = 1_000;

export interface LoopSecond {
  /** End of the second, ms on the shared wall clock. */
  atMs: number;
  p99Ms: number;
  maxMs: number;
}

export function startLoopSeries(file: string): void {
  const histogram = monitorEventLoopDelay({ resolution: LOOP_PROBE_MS });
  histogram.enable();
  const timer = setInterval(() => {
    const second: LoopSecond = {
      atMs: Math.round(ownClockMs()),
      p99Ms: round(loopDelayMs(histogram.percentile(99))),
      maxMs: round(loopDelayMs(histogram.max)),
    };
    histogram.reset();
    try {
      appendFileSync(file, `${JSON.stringify(second)}\n`);
    } catch {
      // The bench removed its folder: the run is over.
      clearInterval(timer);
    }
  }, SECOND_MS);
  timer.unref();
}

const round = (ms: number) => Math.round(ms * 100) / 100;

/** The seconds a probe wrote that ended inside [startMs, endMs]; empty when there is no file. */
export function readLoopSeries(file: string, startMs: number, endMs: number): LoopSecond[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as LoopSecond)
    .filter((second) => second.atMs > startMs + SECOND_MS / 2 && second.atMs <= endMs + SECOND_MS / 2);
}

const target = process.env[LOOP_SERIES_ENV];
if (target) startLoopSeries(target);
