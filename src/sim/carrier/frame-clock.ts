// The phone's 20 ms frame clock. Each frame is due at an absolute time (start + n × period), so
// timer lateness never accumulates as it would with chained setTimeout delays; frames that fell
// behind (a busy event loop) run back to back to catch up, as a real phone's jitter buffer does.

export interface FrameClock {
  stop(): void;
}

/** Frames handled in one timer callback at most, so a long stall cannot starve the event loop. */
const MAX_CATCH_UP_FRAMES = 50;

export function startFrameClock(
  periodMs: number,
  onFrame: (index: number) => void,
  now: () => number = () => performance.now(),
): FrameClock {
  const startedAt = now();
  let next = 0;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;

  const run = (): void => {
    let ran = 0;
    while (!stopped && now() >= startedAt + next * periodMs && ran < MAX_CATCH_UP_FRAMES) {
      const index = next;
      next += 1;
      ran += 1;
      onFrame(index);
    }
    if (!stopped) schedule();
  };
  const schedule = (): void => {
    const delay = Math.max(0, startedAt + next * periodMs - now());
    timer = setTimeout(run, delay);
  };

  run();
  return {
    stop(): void {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
    },
  };
}
