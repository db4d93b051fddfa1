// The words of the API's vocabularies, as plain lists: no schema is built here, so the console can
// import them at run time without bringing TypeBox into its bundle.

export const CAMPAIGN_STATES = ['draft', 'running', 'paused', 'completed', 'cancelled'] as const;
export type CampaignState = (typeof CAMPAIGN_STATES)[number];

/**
 * A contact is `pending` until its first attempt, `dialing` while an attempt is open, `retry` while
 * it waits for another attempt, and `done` once it has its final outcome.
 */
export const CONTACT_STATES = ['pending', 'dialing', 'retry', 'done'] as const;
export type ContactState = (typeof CONTACT_STATES)[number];

/** How one attempt ended. */
export const ATTEMPT_OUTCOMES = [
  'completed',
  'voicemail_left',
  'machine',
  'busy',
  'no_answer',
  'failed',
  'cancelled',
] as const;
export type AttemptOutcome = (typeof ATTEMPT_OUTCOMES)[number];

/** A contact's final outcome: an attempt's, or `dnc` (listed before a dial) or `invalid` (not a number). */
export const FINAL_OUTCOMES = [...ATTEMPT_OUTCOMES, 'dnc', 'invalid'] as const;
export type FinalOutcome = (typeof FINAL_OUTCOMES)[number];

export const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** Outcomes a campaign may retry; `voicemail` covers `voicemail_left` and `machine`. */
export const RETRY_ON = ['busy', 'no_answer', 'failed', 'voicemail'] as const;
export type RetryOn = (typeof RETRY_ON)[number];

export const AMD_MODES = ['off', 'voicemail', 'hangup'] as const;
