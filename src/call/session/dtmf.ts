// Groups the caller's key presses (section 6 of each carrier page in docs/protocols/: one `dtmf` event per key) into one
// entry, so the agent hears "1 2 3 4" once instead of four interruptions. An entry ends at the
// terminator key, at `maxDigits`, or after `interDigitTimeoutMs` without a key.
import { type Clock, type ClockTimer, realClock } from '../clock.js';

export interface DtmfCollectorOptions {
  /** Quiet time after a key that ends the entry; 0 or less: only the terminator or the cap end it. */
  interDigitTimeoutMs: number;
  /** Key that ends the entry and is not part of it (usually `#`); empty: none. */
  terminator: string;
  /** Keys that end the entry when reached; 0 or less: no cap but the internal bound. */
  maxDigits: number;
}

/** Keys a phone keypad can send (A to D exist on some keypads and carriers pass them on). */
const KEYS = new Set('0123456789*#ABCD');

/** Upper bound on one entry whatever the profile says: a stuck key must not grow a buffer forever. */
export const DTMF_MAX_ENTRY_DIGITS = 64;

export class DtmfCollector {
  #digits = '';
  #timer: ClockTimer | null = null;
  #disposed = false;
  readonly #terminator: string;
  readonly #maxDigits: number;
  readonly #interDigitTimeoutMs: number;

  /** `opts` fits a profile's `dtmf` block as it is. */
  constructor(
    opts: DtmfCollectorOptions,
    private readonly onDigits: (digits: string) => void,
    private readonly clock: Clock = realClock,
  ) {
    this.#terminator = opts.terminator;
    this.#interDigitTimeoutMs = opts.interDigitTimeoutMs;
    this.#maxDigits =
      opts.maxDigits > 0 ? Math.min(opts.maxDigits, DTMF_MAX_ENTRY_DIGITS) : DTMF_MAX_ENTRY_DIGITS;
  }

  /** Keys collected and not yet emitted. */
  get pending(): string {
    return this.#digits;
  }

  /** Adds one key. Returns false for a key that is not a keypad key (ignored) or after `dispose`. */
  push(digit: string): boolean {
    const key = digit.toUpperCase();
    if (this.#disposed || !KEYS.has(key)) return false;
    if (this.#terminator !== '' && key === this.#terminator.toUpperCase()) {
      this.flush();
      return true;
    }
    this.#digits += key;
    if (this.#digits.length >= this.#maxDigits) {
      this.flush();
      return true;
    }
    this.#restartTimer();
    return true;
  }

  /** Emits what has been collected now, if anything. */
  flush(): void {
    this.#stopTimer();
    const digits = this.#digits;
    this.#digits = '';
    if (digits !== '' && !this.#disposed) this.onDigits(digits);
  }

  /** Drops what was collected without emitting it; later keys are ignored. */
  dispose(): void {
    this.#disposed = true;
    this.#stopTimer();
    this.#digits = '';
  }

  #restartTimer(): void {
    this.#stopTimer();
    if (this.#interDigitTimeoutMs <= 0) return;
    // The clock's timers never keep the process alive: a pending entry must not hold up a shutdown.
    this.#timer = this.clock.setTimeout(() => {
      this.#timer = null;
      this.flush();
    }, this.#interDigitTimeoutMs);
  }

  #stopTimer(): void {
    if (this.#timer) this.clock.clearTimeout(this.#timer);
    this.#timer = null;
  }
}

/**
 * The user message the agent receives for an entry (sent as `InjectUserMessage`, docs/protocols/agent.md
 * section 10), e.g. `The caller entered 1 2 3 4`. Keys are spaced so the model reads them one by
 * one, not as a number ("1234" would be read "one thousand…"); `*` and `#` stay as typed rather
 * than named, because the name differs between countries (pound, hash) and the model knows both.
 */
export function dtmfMessage(digits: string): string {
  return `The caller entered ${[...digits].join(' ')}`;
}
