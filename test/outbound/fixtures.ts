// One fixture per record type of outbound calling: a campaign and a contact as the store takes them.
import type { CampaignRecord, CampaignSpec, NewContact } from '../../src/store/campaign-records.js';

export function campaignSpecFixture(extra: Partial<CampaignSpec> = {}): CampaignSpec {
  return {
    name: 'renewals',
    profile: 'default',
    carrier: null,
    from: [],
    schedule: { timezone: 'UTC', windows: [] },
    pacing: { callsPerSecond: 2, maxConcurrent: 20 },
    retry: { maxAttempts: 1, delaySeconds: 3_600, on: ['busy', 'no_answer'] },
    amd: { mode: 'off', voicemail: null },
    breaker: { failureShare: 0.5, windowSeconds: 120, minCalls: 10 },
    ...extra,
  };
}

export function campaignRecord(extra: Partial<CampaignRecord> = {}): CampaignRecord {
  return {
    id: 'cmp_fixture',
    spec: campaignSpecFixture(),
    state: 'draft',
    createdAtMs: Date.UTC(2025, 0, 6, 15),
    startedAtMs: null,
    endedAtMs: null,
    pause: null,
    breakerSinceMs: 0,
    ...extra,
  };
}

/** Contact `i`: +1 212 555 0100 + i (New York), with a first name and a blank plan. */
export function newContact(i: number, extra: Partial<NewContact> = {}): NewContact {
  return {
    row: i + 2,
    phone: `+1212555${String(100 + i).padStart(4, '0')}`,
    country: 'US',
    timezone: 'America/New_York',
    variables: { first_name: `Ada${i}`, plan: '' },
    invalid: null,
    ...extra,
  };
}
