// Recording settings and the recording store's variables: every malformed value is refused with
// one line naming the field or variable (and never a secret's value); defaults fill the rest.
import { rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/carriers/load-config.js';
import { readRecordingSettings, readRecordingStore } from '../../src/config/recording.js';
import { writeConfigDir } from '../helpers/config-dir.js';

const S3 = {
  RECORDING_STORE: 's3',
  S3_BUCKET: 'call-recordings',
  AWS_ACCESS_KEY_ID: 'AKIAEXAMPLE',
  AWS_SECRET_ACCESS_KEY: 'very-secret-key-value',
};

describe('recording settings', () => {
  it('reads the contract shape, with 30 days of retention by default', () => {
    expect(readRecordingSettings({ enabled: true, consent: { text: 'This call is recorded.' } })).toEqual({
      ok: true,
      settings: { enabled: true, consent: { text: 'This call is recorded.' }, retentionDays: 30 },
    });
    expect(
      readRecordingSettings({
        enabled: true,
        consent: { audioUrl: 'https://x.example/c.wav' },
        retentionDays: 7,
      }),
    ).toEqual({
      ok: true,
      settings: { enabled: true, consent: { audioUrl: 'https://x.example/c.wav' }, retentionDays: 7 },
    });
    expect(readRecordingSettings({ enabled: false, consent: null })).toMatchObject({
      ok: true,
      settings: { consent: null },
    });
  });

  it.each([
    [null, 'recording must be {"enabled": true'],
    [[], 'recording must be {"enabled": true'],
    [{}, 'recording.enabled must be true or false'],
    [{ enabled: 'yes' }, 'recording.enabled must be true or false'],
    [{ enabled: true, retentionDays: 0 }, 'recording.retentionDays must be an integer from 1 to 3650'],
    [{ enabled: true, retentionDays: 1.5 }, 'recording.retentionDays must be an integer'],
    [{ enabled: true, consent: 'yes' }, 'recording.consent must be {"text": "…"}'],
    [{ enabled: true, consent: { text: '' } }, 'recording.consent.text must be text of 1 to 500 characters'],
    [{ enabled: true, consent: { text: 'x'.repeat(501) } }, 'recording.consent.text must be text'],
    [
      { enabled: true, consent: { audioUrl: 'ftp://x/y.wav' } },
      'recording.consent.audioUrl must be an http(s) URL',
    ],
    [{ enabled: true, consent: { text: 'a', audioUrl: 'https://x/y' } }, 'recording.consent must be'],
    [{ enabled: true, keep: 1 }, 'recording.keep is not a recording setting'],
  ])('refuses %j', (value, problem) => {
    const read = readRecordingSettings(value);
    expect(read.ok).toBe(false);
    if (!read.ok) {
      expect(read.problem).toContain(problem);
      expect(read.problem).not.toContain('\n');
    }
  });
});

describe('RECORDING_STORE', () => {
  it('is the file store under DATA_DIR unless asked otherwise', () => {
    expect(readRecordingStore({}, '/srv/data')).toEqual({ kind: 'file', dir: '/srv/data/recordings' });
  });

  it('reads S3 settings with their defaults', () => {
    expect(readRecordingStore(S3, '/d')).toEqual({
      kind: 's3',
      bucket: 'call-recordings',
      prefix: 'recordings/',
      region: 'us-east-1',
      endpoint: null,
      forcePathStyle: false,
      credentials: { accessKeyId: 'AKIAEXAMPLE', secretAccessKey: 'very-secret-key-value' },
    });
    expect(
      readRecordingStore(
        {
          ...S3,
          S3_PREFIX: 'calls/',
          S3_REGION: 'eu-west-1',
          S3_ENDPOINT: 'http://minio:9000',
          S3_FORCE_PATH_STYLE: 'true',
        },
        '/d',
      ),
    ).toMatchObject({
      prefix: 'calls/',
      region: 'eu-west-1',
      endpoint: 'http://minio:9000',
      forcePathStyle: true,
    });
  });

  it.each([
    [{ RECORDING_STORE: 'disk' }, /^RECORDING_STORE: must be one of file, s3, got "disk"$/],
    [{ RECORDING_STORE: 's3' }, /^S3_BUCKET: required when RECORDING_STORE=s3$/],
    [{ ...S3, S3_BUCKET: 'Bad_Bucket' }, /^S3_BUCKET: must be a bucket name/],
    [{ ...S3, S3_PREFIX: '/abs/' }, /^S3_PREFIX: must be a key prefix/],
    [{ ...S3, S3_REGION: 'EU West' }, /^S3_REGION: must be a region name/],
    [{ ...S3, S3_ENDPOINT: 'minio:9000' }, /^S3_ENDPOINT: /],
    [{ ...S3, S3_FORCE_PATH_STYLE: 'yes' }, /^S3_FORCE_PATH_STYLE: must be one of true, false/],
    [{ ...S3, AWS_ACCESS_KEY_ID: '' }, /^AWS_ACCESS_KEY_ID: required with the other/],
    [{ ...S3, AWS_SECRET_ACCESS_KEY: '' }, /^AWS_SECRET_ACCESS_KEY: required with the other/],
  ])('refuses %j in one line', (env, message) => {
    let thrown: Error | null = null;
    try {
      readRecordingStore(env, '/d');
    } catch (err) {
      thrown = err as Error;
    }
    expect(thrown?.message).toMatch(message);
    expect(thrown?.message).not.toContain('\n');
    expect(thrown?.message).not.toContain('very-secret-key-value');
    expect((thrown as { code?: string } | null)?.code).toBe('CALLBRIDGE_CONFIG_INVALID');
  });
});

describe('a profile with recording', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  const profile = (recording: unknown) => {
    const dir = writeConfigDir({
      support: { prompt: 'p', think: { provider: { type: 'open_ai', model: 'm' } }, recording },
    });
    dirs.push(dir);
    return () => loadConfig({ CONFIG_DIR: dir, DATA_DIR: dir });
  };

  it('is loaded with its defaults', () => {
    expect(profile({ enabled: true })().profiles.support?.recording).toEqual({
      enabled: true,
      consent: null,
      retentionDays: 30,
    });
  });

  it('is refused in one line naming the file and the field', () => {
    expect(profile({ enabled: true, retentionDays: -1 })).toThrow(
      /agents\/support\.json: recording\.retentionDays must be an integer from 1 to 3650$/,
    );
  });
});
