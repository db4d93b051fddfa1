// The New campaign form's fields and the campaign JSON they make (CONTRACT's campaign JSON):
// empty fields are left out so the server's defaults apply. Pure, so it is tested without a browser.
import type { CampaignInput } from '../../src/api/index.js';
import { RETRY_ON, WEEKDAYS } from '../../src/api/vocabulary.js';

export type Weekday = (typeof WEEKDAYS)[number];
export type RetryOn = (typeof RETRY_ON)[number];
export { RETRY_ON, WEEKDAYS };

export interface CampaignFields {
  name: string;
  profile: string;
  carrier: string;
  /** Caller IDs, one per line or separated by commas. */
  from: string;
  timezone: string;
  days: Weekday[];
  start: string;
  end: string;
  callsPerSecond: string;
  maxConcurrent: string;
  maxAttempts: string;
  delaySeconds: string;
  retryOn: RetryOn[];
  amdMode: '' | 'off' | 'voicemail' | 'hangup';
  voicemailText: string;
  failureShare: string;
  windowSeconds: string;
  minCalls: string;
  recording: boolean;
  consentText: string;
}

export const EMPTY_CAMPAIGN: CampaignFields = {
  name: '',
  profile: '',
  carrier: '',
  from: '',
  timezone: '',
  days: [],
  start: '',
  end: '',
  callsPerSecond: '',
  maxConcurrent: '',
  maxAttempts: '',
  delaySeconds: '',
  retryOn: [],
  amdMode: '',
  voicemailText: '',
  failureShare: '',
  windowSeconds: '',
  minCalls: '',
  recording: false,
  consentText: '',
};

/** Drops the keys whose value is undefined, and gives undefined for an object left empty. */
function compact<T extends object>(object: T): T | undefined {
  const kept = Object.fromEntries(Object.entries(object).filter(([, value]) => value !== undefined));
  // Only keys holding undefined were dropped: what is left is still a T.
  return Object.keys(kept).length === 0 ? undefined : (kept as T);
}

const text = (value: string) => (value.trim() === '' ? undefined : value.trim());
const number = (value: string) => (value.trim() === '' ? undefined : Number(value));

export function campaignJson(fields: CampaignFields): CampaignInput {
  const from = fields.from
    .split(/[\s,]+/)
    .map((n) => n.trim())
    .filter((n) => n !== '');
  const window =
    fields.days.length > 0 || fields.start !== '' || fields.end !== ''
      ? [{ days: fields.days, start: fields.start, end: fields.end }]
      : undefined;
  const voicemail = compact({ text: text(fields.voicemailText) });
  return (
    compact({
      name: fields.name.trim(),
      profile: text(fields.profile),
      carrier: text(fields.carrier),
      from: from.length > 0 ? from : undefined,
      schedule: compact({ timezone: text(fields.timezone), windows: window }),
      pacing: compact({
        callsPerSecond: number(fields.callsPerSecond),
        maxConcurrent: number(fields.maxConcurrent),
      }),
      retry: compact({
        maxAttempts: number(fields.maxAttempts),
        delaySeconds: number(fields.delaySeconds),
        on: fields.retryOn.length > 0 ? fields.retryOn : undefined,
      }),
      amd: compact({ mode: fields.amdMode === '' ? undefined : fields.amdMode, voicemail }),
      breaker: compact({
        failureShare: number(fields.failureShare),
        windowSeconds: number(fields.windowSeconds),
        minCalls: number(fields.minCalls),
      }),
      recording: fields.recording
        ? { enabled: true, consent: text(fields.consentText) ? { text: fields.consentText.trim() } : null }
        : undefined,
    }) ?? { name: '' }
  );
}
