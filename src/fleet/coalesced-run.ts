// One task run at a time: a run asked for while one is in flight happens once, right after it, and
// sees the state as it is then. The directory's beats and the live feed's reads both work this way.
export class CoalescedRun {
  readonly #task: () => Promise<void>;
  #running: Promise<void> | null = null;
  #again = false;

  constructor(task: () => Promise<void>) {
    this.#task = task;
  }

  /** The run in flight, or null. */
  get inFlight(): Promise<void> | null {
    return this.#running;
  }

  /** Runs the task now, or once more after the run in flight; resolves when that run ends. */
  run(): Promise<void> {
    if (this.#running) {
      this.#again = true;
      return this.#running;
    }
    this.#running = this.#task().finally(() => {
      this.#running = null;
      if (this.#again) {
        this.#again = false;
        void this.run();
      }
    });
    return this.#running;
  }
}
