// Why a call ended: the one list of reasons a call record may state, those of a call the bridge
// carried and those of an outbound call the carrier ended before any stream (its final status).
// Each reason says who ended the call, which decides what is left to do with the phone leg, and
// whether the service rather than the conversation failed.
import type { OutboundFinalStatus } from '../carrier-port.js';

/**
 * `by`: `caller` or `carrier`, the phone side is already gone (nothing to hang up); `transfer`, the
 * call goes on elsewhere (only the stream is closed); `bridge`, the bridge hangs up.
 * `failed`: the service, not the conversation, ended the call (the record's outcome).
 */
export const END_REASONS = Object.freeze({
  caller_hangup: { by: 'caller', failed: false },
  end_call: { by: 'bridge', failed: false },
  transferred: { by: 'transfer', failed: false },
  silence_timeout: { by: 'bridge', failed: false },
  max_duration: { by: 'bridge', failed: false },
  agent_closed: { by: 'bridge', failed: true },
  agent_error: { by: 'bridge', failed: true },
  agent_unreachable: { by: 'bridge', failed: true },
  agent_refused: { by: 'bridge', failed: true },
  operator_hangup: { by: 'bridge', failed: false },
  shutdown: { by: 'bridge', failed: false },
  /** Outbound: a machine answered and the campaign's voicemail was left after the beep. */
  voicemail_left: { by: 'bridge', failed: false },
  /** Outbound: a machine answered and the call hung up (detection mode `hangup`, or a fax). */
  machine: { by: 'bridge', failed: false },
  // Outbound calls that ended at the carrier with no stream: its final status callback.
  carrier_completed: { by: 'carrier', failed: true },
  carrier_busy: { by: 'carrier', failed: true },
  carrier_no_answer: { by: 'carrier', failed: true },
  carrier_failed: { by: 'carrier', failed: true },
  carrier_canceled: { by: 'carrier', failed: true },
} as const satisfies Record<string, { by: 'caller' | 'carrier' | 'transfer' | 'bridge'; failed: boolean }>);

export type EndReason = keyof typeof END_REASONS;

/** The reason recorded for an outbound call the carrier ended before its stream, by final status. */
export const CARRIER_FINAL_REASONS = Object.freeze({
  completed: 'carrier_completed',
  busy: 'carrier_busy',
  no_answer: 'carrier_no_answer',
  failed: 'carrier_failed',
  canceled: 'carrier_canceled',
} as const satisfies Record<OutboundFinalStatus, EndReason>);
