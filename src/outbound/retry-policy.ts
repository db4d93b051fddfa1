// What follows an attempt: another attempt after the campaign's delay, or the contact's final
// outcome. One budget per contact: `maxAttempts` counts every attempt whatever its outcome, so
// busy, no answer, busy with a budget of 2 is two attempts, not two per outcome.
import type { AttemptOutcome, CampaignSpec, FinalOutcome, RetryOn } from '../store/campaign-records.js';

export type NextStep = { state: 'retry'; dueAtMs: number } | { state: 'done'; outcome: FinalOutcome };

/** The `retry.on` entry an outcome falls under; null for outcomes never retried. */
export function retryClass(outcome: AttemptOutcome): RetryOn | null {
  switch (outcome) {
    case 'busy':
    case 'no_answer':
    case 'failed':
      return outcome;
    case 'voicemail_left':
    case 'machine':
      return 'voicemail';
    case 'completed':
    case 'cancelled':
      return null;
  }
}

export function nextStep(input: {
  outcome: AttemptOutcome;
  /** Attempts made so far, this one included. */
  attemptsMade: number;
  retry: CampaignSpec['retry'];
  /** A cancelled or completed campaign makes no further attempt. */
  campaignOpen: boolean;
  nowMs: number;
}): NextStep {
  const cls = retryClass(input.outcome);
  const retries =
    input.campaignOpen &&
    cls !== null &&
    input.retry.on.includes(cls) &&
    input.attemptsMade < input.retry.maxAttempts;
  if (!retries) return { state: 'done', outcome: input.outcome };
  return { state: 'retry', dueAtMs: input.nowMs + input.retry.delaySeconds * 1_000 };
}

/** Outcomes the circuit breaker counts as failures; busy and no answer are the callee's doing. */
export function isBreakerFailure(outcome: AttemptOutcome): boolean {
  return outcome === 'failed';
}
