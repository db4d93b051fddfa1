// Campaigns and contacts as the admin API shows them: times as ISO 8601, the spec's fields at the
// top level as they were sent, and the progress beside them.
import type { Campaign, CampaignProgress, Contact } from '../api/campaigns.js';
import type { AttemptSummary, CampaignRecord, ContactRecord } from '../store/campaign-records.js';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export function campaignView(campaign: CampaignRecord, progress: CampaignProgress): Campaign {
  const { spec } = campaign;
  return {
    id: campaign.id,
    name: spec.name,
    state: campaign.state,
    profile: spec.profile,
    carrier: spec.carrier,
    from: spec.from,
    schedule: spec.schedule,
    pacing: spec.pacing,
    retry: spec.retry,
    amd: spec.amd,
    breaker: spec.breaker,
    createdAt: iso(campaign.createdAtMs),
    startedAt: iso(campaign.startedAtMs),
    endedAt: iso(campaign.endedAtMs),
    pause:
      campaign.pause === null
        ? null
        : { by: campaign.pause.by, reason: campaign.pause.message, at: iso(campaign.pause.atMs) },
    progress,
  };
}
export type CampaignView = Campaign;

function attemptView(attempt: AttemptSummary) {
  return {
    id: attempt.id,
    number: attempt.number,
    from: attempt.from,
    callSid: attempt.callSid,
    startedAt: iso(attempt.startedAtMs),
    endedAt: iso(attempt.endedAtMs),
    outcome: attempt.outcome,
    durationMs: attempt.durationMs,
    answeredBy: attempt.answeredBy,
    summary: attempt.summary,
    reason: attempt.reason,
  };
}

export function contactView(contact: ContactRecord): Contact {
  const waiting = contact.state === 'pending' || contact.state === 'retry';
  return {
    id: contact.seq,
    row: contact.row,
    phone: contact.phone,
    country: contact.country,
    timezone: contact.timezone,
    variables: contact.variables,
    state: contact.state,
    outcome: contact.outcome,
    note: contact.note,
    nextAttemptAt: waiting ? iso(contact.dueAtMs) : null,
    attempts: contact.attempts.map(attemptView),
  };
}
