// A carrier's call status in the words Twilio made common, so the dialer reads every carrier alike
// (docs/protocols/answering-machine-detection.md).

// The words themselves are the originator port's, which every carrier's placer implements.
export type {
  PlacedCallState as CarrierCallState,
  PlacedCallStatus as CarrierCallStatus,
} from '../outbound/ports.js';

/** A status word off the wire, fit for a log line. */
export function boundedStatusWord(value: unknown): string {
  return typeof value === 'string' && /^[A-Za-z0-9_ -]{1,32}$/.test(value) ? value : 'unknown';
}
