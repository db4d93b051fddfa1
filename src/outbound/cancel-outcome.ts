// What a call in flight when its campaign is cancelled is recorded as: what it was. The cancel asks
// the carrier to hang up every such call, and what the carrier then reports is about that hang-up:
// a call still ringing ends `cancelled` (some carriers report `failed`, `busy` or `no_answer` for a
// call withdrawn before the answer), while a call that was answered keeps its own outcome
// (`completed`, `voicemail_left`, `machine`). Either way the row says the cancel ended it.
import type { AttemptOutcome, CampaignRecord } from '../store/campaign-records.js';
import type { AttemptDetails } from '../store/campaign-store.js';

/** Outcomes a carrier reports for a call it withdrew before anyone answered. */
const UNANSWERED: ReadonlySet<AttemptOutcome> = new Set(['failed', 'busy', 'no_answer', 'cancelled']);

export const CANCELLED_IN_FLIGHT = 'in flight when the campaign was cancelled';

export function outcomeAtCancel(
  campaign: Pick<CampaignRecord, 'state' | 'endedAtMs'>,
  outcome: AttemptOutcome,
  details: AttemptDetails,
  nowMs: number,
): { outcome: AttemptOutcome; details: AttemptDetails } {
  // Only reports that come after the cancel: a call that failed before it failed on its own.
  if (campaign.state !== 'cancelled' || campaign.endedAtMs === null || nowMs < campaign.endedAtMs)
    return { outcome, details };
  const said = details.reason ? ` (${details.reason})` : '';
  if (UNANSWERED.has(outcome) && !(details.durationMs && details.durationMs > 0)) {
    return { outcome: 'cancelled', details: { ...details, reason: `${CANCELLED_IN_FLIGHT}${said}` } };
  }
  return { outcome, details: { ...details, reason: `${CANCELLED_IN_FLIGHT}: hung up${said}` } };
}
