// Recording settings (docs/recordings.md): whether a call is recorded, the consent prompt played
// first, and how long the file is kept; asked for by a profile, a campaign or one call. And where
// recordings are stored (`RECORDING_STORE` and the `S3_*` variables).
import { type Env, envError, envOneOf, envString, envUrl } from './env.js';
import { BASE_URL } from './urls.js';

export type RecordingConsent = { text: string } | { audioUrl: string } | null;

export interface RecordingSettings {
  enabled: boolean;
  /** Played to the caller before the agent speaks, and part of the recording. */
  consent: RecordingConsent;
  retentionDays: number;
}

export const DEFAULT_RETENTION_DAYS = 30;
export const MAX_RETENTION_DAYS = 3650;
export const MAX_CONSENT_TEXT_CHARS = 500;
export const MAX_CONSENT_URL_CHARS = 1000;

export const RECORDING_SHAPE =
  '{"enabled": true, "consent": {"text": "…"} | {"audioUrl": "https://…"} | null, "retentionDays": 30}';

/**
 * Reads a `recording` value (a profile file, a campaign's JSON, a call request). Returns the
 * settings, or a problem in one line naming the field under `at` (`recording.consent.text`).
 */
export function readRecordingSettings(
  value: unknown,
  at = 'recording',
): { ok: true; settings: RecordingSettings } | { ok: false; problem: string } {
  const fail = (problem: string) => ({ ok: false as const, problem });
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return fail(`${at} must be ${RECORDING_SHAPE}`);
  }
  const { enabled, consent, retentionDays, ...rest } = value as Record<string, unknown>;
  const extra = Object.keys(rest)[0];
  if (extra !== undefined) return fail(`${at}.${extra} is not a recording setting`);
  if (typeof enabled !== 'boolean') return fail(`${at}.enabled must be true or false`);
  let days = DEFAULT_RETENTION_DAYS;
  if (retentionDays !== undefined) {
    if (
      typeof retentionDays !== 'number' ||
      !Number.isInteger(retentionDays) ||
      retentionDays < 1 ||
      retentionDays > MAX_RETENTION_DAYS
    ) {
      return fail(`${at}.retentionDays must be an integer from 1 to ${MAX_RETENTION_DAYS}`);
    }
    days = retentionDays;
  }
  const readConsent = readConsentOf(consent, `${at}.consent`);
  if (!readConsent.ok) return readConsent;
  return { ok: true, settings: { enabled, consent: readConsent.consent, retentionDays: days } };
}

function readConsentOf(
  value: unknown,
  at: string,
): { ok: true; consent: RecordingConsent } | { ok: false; problem: string } {
  if (value === undefined || value === null) return { ok: true, consent: null };
  const shape = `${at} must be {"text": "…"}, {"audioUrl": "https://…"} or null`;
  if (typeof value !== 'object' || Array.isArray(value)) return { ok: false, problem: shape };
  const keys = Object.keys(value);
  if (keys.length !== 1) return { ok: false, problem: shape };
  const { text, audioUrl } = value as { text?: unknown; audioUrl?: unknown };
  if (text !== undefined) {
    if (typeof text !== 'string' || text.trim() === '' || text.length > MAX_CONSENT_TEXT_CHARS) {
      return { ok: false, problem: `${at}.text must be text of 1 to ${MAX_CONSENT_TEXT_CHARS} characters` };
    }
    return { ok: true, consent: { text } };
  }
  if (audioUrl !== undefined) {
    if (
      typeof audioUrl !== 'string' ||
      audioUrl.length > MAX_CONSENT_URL_CHARS ||
      !/^https?:\/\//i.test(audioUrl) ||
      !URL.canParse(audioUrl)
    ) {
      return { ok: false, problem: `${at}.audioUrl must be an http(s) URL of a WAV file` };
    }
    return { ok: true, consent: { audioUrl } };
  }
  return { ok: false, problem: shape };
}

/** Where recordings are kept. */
export type RecordingStoreConfig =
  | { kind: 'file'; dir: string }
  | {
      kind: 's3';
      bucket: string;
      prefix: string;
      region: string;
      endpoint: string | null;
      forcePathStyle: boolean;
      /** The standard `AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY`; null: the SDK's own chain. */
      credentials: { accessKeyId: string; secretAccessKey: string } | null;
    };

const S3_BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
const S3_PREFIX = /^[\w!\-.*'()/]{0,512}$/;

/** `RECORDING_STORE` and its variables; `dataDir` holds the file store's `recordings/`. */
export function readRecordingStore(env: Env, dataDir: string): RecordingStoreConfig {
  const kind = envOneOf(env, 'RECORDING_STORE', ['file', 's3'] as const, 'file');
  if (kind === 'file') return { kind, dir: `${dataDir}/recordings` };
  const bucket = envString(env, 'S3_BUCKET');
  if (bucket === undefined) throw envError('S3_BUCKET', 'required when RECORDING_STORE=s3');
  if (!S3_BUCKET.test(bucket)) {
    throw envError('S3_BUCKET', 'must be a bucket name (3 to 63 of a-z, 0-9, . and -)', bucket);
  }
  const prefix = env.S3_PREFIX?.trim() ?? 'recordings/';
  if (!S3_PREFIX.test(prefix) || prefix.startsWith('/')) {
    throw envError(
      'S3_PREFIX',
      "must be a key prefix of letters, digits and -_.!*'()/, not starting with /",
      prefix,
    );
  }
  const region = envString(env, 'S3_REGION') ?? envString(env, 'AWS_REGION') ?? 'us-east-1';
  if (!/^[a-z0-9-]{2,32}$/.test(region))
    throw envError('S3_REGION', 'must be a region name like eu-west-1', region);
  const endpoint = envUrl(env, 'S3_ENDPOINT', BASE_URL(['http', 'https'])) ?? null;
  const forcePathStyle = envOneOf(env, 'S3_FORCE_PATH_STYLE', ['true', 'false'] as const, 'false') === 'true';
  const accessKeyId = envString(env, 'AWS_ACCESS_KEY_ID');
  const secretAccessKey = envString(env, 'AWS_SECRET_ACCESS_KEY');
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    throw envError(
      accessKeyId === undefined ? 'AWS_ACCESS_KEY_ID' : 'AWS_SECRET_ACCESS_KEY',
      'required with the other of AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY',
    );
  }
  return {
    kind,
    bucket,
    prefix,
    region,
    endpoint,
    forcePathStyle,
    credentials:
      accessKeyId !== undefined && secretAccessKey !== undefined ? { accessKeyId, secretAccessKey } : null,
  };
}
