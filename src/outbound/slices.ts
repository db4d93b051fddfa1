// Large uploads are read in slices that give the event loop back between them (docs/security.md,
// "Uploads"): a 10 MB contacts or do-not-call CSV is tens of thousands of rows to parse, validate
// and store, and every live call's audio waits on the same loop. A slice is small enough to cost a
// few milliseconds on a busy machine; between slices, pending I/O (media frames, health checks) runs.
import { parse, type Options } from 'csv-parse';

/** Characters of CSV text handed to the parser at a time. */
export const CSV_SLICE_CHARS = 16 * 1024;
/** Rows validated between two yields, at most. */
export const ROWS_PER_SLICE = 100;
/** Wall time one slice may take before it yields, whatever its row count (a busy machine is slower). */
export const SLICE_MS = 5;
/** Rows written to the store per call. */
export const STORE_BATCH = 100;

/** Lets every pending I/O callback and timer run before going on. */
export function yieldToLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Counts the work of one loop and yields every `perSlice` items or SLICE_MS, whichever comes first. */
export class Slicer {
  #count = 0;
  #since = performance.now();

  constructor(private readonly perSlice = ROWS_PER_SLICE) {}

  /** Called before each item; resolves at once unless the slice is used up. */
  async next(): Promise<void> {
    this.#count += 1;
    if (this.#count % this.perSlice !== 0 && performance.now() - this.#since < SLICE_MS) return;
    await yieldToLoop();
    this.#since = performance.now();
  }
}

/** `work` applied to each item, in order, in slices (Slicer). */
export async function mapInSlices<T, R>(
  items: readonly T[],
  work: (item: T, index: number) => R,
  perSlice = ROWS_PER_SLICE,
): Promise<R[]> {
  const out: R[] = [];
  const slicer = new Slicer(perSlice);
  for (let i = 0; i < items.length; i++) {
    await slicer.next();
    out.push(work(items[i]!, i));
  }
  return out;
}

/** The CSV's records as csv-parse reads them with `options`, fed a slice at a time. */
export async function parseCsvInSlices<R>(text: string, options: Options): Promise<R[]> {
  const parser = parse(options);
  const records: R[] = [];
  let settled = false;
  const done = new Promise<void>((resolve, reject) => {
    parser.on('readable', () => {
      let record: R | null;
      while ((record = parser.read() as R | null) !== null) records.push(record);
    });
    parser.once('end', () => {
      settled = true;
      resolve();
    });
    parser.once('error', (err) => {
      settled = true;
      reject(err);
    });
  });
  // Observed from now on: a parse error while a slice waits would otherwise be an unhandled
  // rejection, which ends the process. It is still thrown below, by `await done`.
  done.catch(() => {});
  // Settled early: an error, or `to` reached (the parser ends itself).
  for (let at = 0; at < text.length && !settled; at += CSV_SLICE_CHARS) {
    parser.write(text.slice(at, at + CSV_SLICE_CHARS));
    await yieldToLoop();
  }
  if (!settled) parser.end();
  await done;
  return records;
}
