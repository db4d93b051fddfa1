// The campaign JSON of `POST /v1/campaigns`: its shape (TypeBox, unknown fields refused), the rules
// that span fields or need the configuration (profiles, carriers, numbers, zones), and the
// defaults. Every bad field is named once in one 400 answer.
import { CampaignInput } from '../api/campaigns.js';
import { readRecordingSettings } from '../config/recording.js';
import type { AgentProfile } from '../config/types.js';
import { BadRequestError } from '../errors.js';
import { describeFieldErrors, type FieldError, schemaErrors } from './field-errors.js';
import { normalizePhone } from './phone.js';
import type { CampaignSpec } from '../store/campaign-records.js';
import { ianaZone } from './timezone.js';
import { voicemailAudioUrlProblem } from './voicemail-audio-url.js';
import { windowProblem } from './windows.js';

export { CAMPAIGN_LIMITS, CampaignInput } from '../api/campaigns.js';

export const CAMPAIGN_DEFAULTS = {
  timezone: 'UTC',
  callsPerSecond: 1,
  maxConcurrent: 10,
  maxAttempts: 1,
  delaySeconds: 3_600,
  retryOn: ['busy', 'no_answer'] as CampaignSpec['retry']['on'],
  failureShare: 0.5,
  windowSeconds: 120,
  minCalls: 10,
} as const;

export interface CampaignSpecContext {
  profiles: Readonly<Record<string, AgentProfile>>;
  /** Used when the campaign names no profile. */
  defaultProfile: string;
  /** Carriers that can place calls here, the default first; a campaign may name one of them. */
  carriers: readonly string[];
  /** Carriers among them with no answering-machine detection: a campaign asking for it is refused. */
  carriersWithoutMachineDetection?: readonly string[];
}

/** The validated campaign with its defaults; throws BadRequestError naming every bad field. */
export function campaignSpec(body: unknown, context: CampaignSpecContext): CampaignSpec {
  const shapeErrors = schemaErrors(CampaignInput, body);
  if (shapeErrors.length > 0) throw new BadRequestError(describeFieldErrors('invalid campaign', shapeErrors));
  const input = body as CampaignInput;
  const errors: FieldError[] = [];

  const nameProblem = campaignNameProblem(input.name);
  if (nameProblem !== null) errors.push({ field: 'name', problem: nameProblem });

  const profile = input.profile ?? context.defaultProfile;
  if (!Object.hasOwn(context.profiles, profile)) {
    errors.push({
      field: 'profile',
      problem: `no profile ${JSON.stringify(profile)}; known: ${Object.keys(context.profiles).join(', ')}`,
    });
  }
  if (input.carrier !== undefined && !context.carriers.includes(input.carrier)) {
    errors.push({
      field: 'carrier',
      problem: `must be one of ${context.carriers.join(', ') || '(no carrier can place calls)'}, got ${JSON.stringify(input.carrier)}`,
    });
  }

  const from: string[] = [];
  for (const [i, raw] of (input.from ?? []).entries()) {
    const phone = raw.startsWith('+') ? normalizePhone(raw) : null;
    if (!phone?.ok) errors.push({ field: `from[${i}]`, problem: 'must be a valid E.164 number' });
    else if (from.includes(phone.e164)) errors.push({ field: `from[${i}]`, problem: 'is listed twice' });
    else from.push(phone.e164);
  }

  const timezone = ianaZone(input.schedule?.timezone ?? CAMPAIGN_DEFAULTS.timezone);
  if (timezone === null) {
    errors.push({ field: 'schedule.timezone', problem: 'must be an IANA time zone, like America/New_York' });
  }
  const windows = input.schedule?.windows ?? [];
  for (const [i, window] of windows.entries()) {
    const problem = windowProblem(window);
    if (problem) errors.push({ field: `schedule.windows[${i}]`, problem });
  }

  const mode = input.amd?.mode ?? (input.amd?.voicemail ? 'voicemail' : 'off');
  const voicemail = input.amd?.voicemail ?? null;
  if (mode === 'voicemail' && voicemail?.text === undefined && voicemail?.audioUrl === undefined) {
    errors.push({ field: 'amd.voicemail', problem: 'mode voicemail needs a voicemail text or audioUrl' });
  }
  if (mode !== 'voicemail' && voicemail !== null) {
    errors.push({ field: 'amd.voicemail', problem: `is only used with mode voicemail, not ${mode}` });
  }
  const audioUrlProblem =
    voicemail?.audioUrl === undefined ? null : voicemailAudioUrlProblem(voicemail.audioUrl);
  if (audioUrlProblem !== null) errors.push({ field: 'amd.voicemail.audioUrl', problem: audioUrlProblem });
  const carrier = input.carrier ?? context.carriers[0];
  if (mode !== 'off' && carrier !== undefined && context.carriersWithoutMachineDetection?.includes(carrier)) {
    errors.push({
      field: 'amd.mode',
      problem: `${carrier} has no answering-machine detection: set amd.mode to off for a campaign through ${carrier}`,
    });
  }

  const recording = input.recording === undefined ? null : readRecordingSettings(input.recording);
  if (recording !== null && !recording.ok) {
    const [field, ...problem] = recording.problem.split(' ');
    errors.push({ field: field!, problem: problem.join(' ') });
  }

  if (errors.length > 0) throw new BadRequestError(describeFieldErrors('invalid campaign', errors));
  return {
    name: input.name.trim(),
    profile,
    carrier: input.carrier ?? null,
    from,
    schedule: { timezone: timezone!, windows: windows.map((w) => ({ ...w, days: [...w.days] })) },
    pacing: {
      callsPerSecond: input.pacing?.callsPerSecond ?? CAMPAIGN_DEFAULTS.callsPerSecond,
      maxConcurrent: input.pacing?.maxConcurrent ?? CAMPAIGN_DEFAULTS.maxConcurrent,
    },
    retry: {
      maxAttempts: input.retry?.maxAttempts ?? CAMPAIGN_DEFAULTS.maxAttempts,
      delaySeconds: input.retry?.delaySeconds ?? CAMPAIGN_DEFAULTS.delaySeconds,
      on: [...(input.retry?.on ?? CAMPAIGN_DEFAULTS.retryOn)],
    },
    amd: { mode, voicemail: mode === 'voicemail' ? voicemail : null },
    breaker: {
      failureShare: input.breaker?.failureShare ?? CAMPAIGN_DEFAULTS.failureShare,
      windowSeconds: input.breaker?.windowSeconds ?? CAMPAIGN_DEFAULTS.windowSeconds,
      minCalls: input.breaker?.minCalls ?? CAMPAIGN_DEFAULTS.minCalls,
    },
    ...(recording?.ok ? { recording: recording.settings } : {}),
  };
}

/**
 * Control characters (C0, DEL, C1) and the bidirectional controls (U+061C, U+200E-U+200F,
 * U+202A-U+202E, U+2066-U+2069): a name shown in a terminal, a log line, a spreadsheet or the
 * console must read as written, not reorder or rewrite what is around it.
 */
const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;

function hasControlCharacter(text: string): boolean {
  for (const char of text) {
    const code = char.codePointAt(0)!;
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) return true;
  }
  return false;
}

/** Why a campaign name cannot be used, or null. */
export function campaignNameProblem(name: string): string | null {
  if (name.trim() === '') return 'must not be blank';
  if (hasControlCharacter(name) || BIDI_CONTROLS.test(name))
    return 'must not contain control or bidirectional-override characters';
  return null;
}
