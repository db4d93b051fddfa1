// A carrier's call status in the words Twilio made common, so the dialer reads every carrier alike
// (docs/protocols/answering-machine-detection.md).

export type CarrierCallStatus =
  | 'queued'
  | 'ringing'
  | 'in-progress'
  | 'completed'
  | 'busy'
  | 'no-answer'
  | 'failed'
  | 'canceled'
  | 'unknown';

export interface CarrierCallState {
  callSid: string;
  status: CarrierCallStatus;
  /** The carrier's own word for it, for logs (bounded, letters and separators only). */
  carrierStatus: string;
}

/** A status word off the wire, fit for a log line. */
export function boundedStatusWord(value: unknown): string {
  return typeof value === 'string' && /^[A-Za-z0-9_ -]{1,32}$/.test(value) ? value : 'unknown';
}
