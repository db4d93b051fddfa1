// The New campaign form sends the campaign JSON of docs/campaigns.md: the fields filled in, in their
// places and types, and nothing for the fields left empty, so the server's defaults apply.
import { describe, expect, it } from 'vitest';
import { campaignJson, EMPTY_CAMPAIGN } from '../../web/src/campaign-form.js';

describe('campaignJson', () => {
  it('sends only the name when nothing else is filled in', () => {
    expect(campaignJson({ ...EMPTY_CAMPAIGN, name: ' renewals ' })).toEqual({ name: 'renewals' });
  });

  it('puts every filled field where the campaign JSON has it', () => {
    const json = campaignJson({
      ...EMPTY_CAMPAIGN,
      name: 'renewals',
      profile: 'default',
      carrier: 'twilio',
      from: '+15550100, +15550101\n+15550102',
      timezone: 'America/New_York',
      days: ['mon', 'fri'],
      start: '09:00',
      end: '18:00',
      callsPerSecond: '2',
      maxConcurrent: '20',
      maxAttempts: '3',
      delaySeconds: '3600',
      retryOn: ['busy', 'voicemail'],
      amdMode: 'voicemail',
      voicemailText: 'Hi {{first_name}}',
      failureShare: '0.5',
      windowSeconds: '120',
      minCalls: '5',
    });
    expect(json).toEqual({
      name: 'renewals',
      profile: 'default',
      carrier: 'twilio',
      from: ['+15550100', '+15550101', '+15550102'],
      schedule: {
        timezone: 'America/New_York',
        windows: [{ days: ['mon', 'fri'], start: '09:00', end: '18:00' }],
      },
      pacing: { callsPerSecond: 2, maxConcurrent: 20 },
      retry: { maxAttempts: 3, delaySeconds: 3600, on: ['busy', 'voicemail'] },
      amd: { mode: 'voicemail', voicemail: { text: 'Hi {{first_name}}' } },
      breaker: { failureShare: 0.5, windowSeconds: 120, minCalls: 5 },
    });
  });

  it('asks for recording with the consent prompt only when the box is ticked', () => {
    expect(
      campaignJson({ ...EMPTY_CAMPAIGN, name: 'r', recording: true, consentText: 'This call is recorded.' }),
    ).toEqual({
      name: 'r',
      recording: { enabled: true, consent: { text: 'This call is recorded.' } },
    });
    expect(campaignJson({ ...EMPTY_CAMPAIGN, name: 'r', consentText: 'ignored' })).toEqual({ name: 'r' });
  });
});
