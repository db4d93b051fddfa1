// The configuration: a pure function of an environment object and the config folder (besides a
// random stream token key when nothing to derive one from is set). Environment variables are
// checked first, then the files; the first problem stops loading with a one-line ConfigError.
import { createHmac, randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { CarrierSettingsReader } from './carrier-settings.js';
import { readRecordingStore } from './recording.js';
import { selectAgent } from './agent-host.js';
import { type Env, envError, envInt, envList, envOneOf, envString, envUrl } from './env.js';
import { readHost, readInstanceId } from './listen.js';
import { displayPath } from './json-file.js';
import { loadNumbers } from './numbers.js';
import { loadProfiles } from './profiles.js';
import { loadRegions } from './regions.js';
import { readSpeech } from './speech.js';
import { type CarrierConfigs, type Config, REGIONS } from './types.js';
import { BASE_URL, ENDPOINT_URL } from './urls.js';
import { isAddressOrCidr } from './cidrs.js';
import { readDialPolicy, readFetchPolicy } from './trust-policies.js';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export const QUEUE_PILOT_PROVIDERS = ['tasks', 'inbox', 'deploy', 'code', 'payments'] as const;

/** Webhook provider name → the variable holding its secrets. */
export const WEBHOOK_SECRET_VARS = {
  tasks: 'WEBHOOK_SECRET_TASKS',
  inbox: 'WEBHOOK_SECRET_INBOX',
  inbox_rules: 'WEBHOOK_SECRET_INBOX_RULES',
  deploy: 'WEBHOOK_SECRET_DEPLOY',
  code: 'WEBHOOK_SECRET_CODE',
  payments: 'WEBHOOK_SECRET_PAYMENTS',
} as const;

const STREAM_TOKEN_LABEL = 'callbridge stream token key v1';

export interface LoadOptions {
  /** Where relative paths resolve; default the process's working directory. */
  cwd?: string;
  hostname?: string;
}

/**
 * The configuration for these carriers (src/carriers/registry.ts lists them; its `loadConfig`
 * passes them): each carrier's settings sit under its name.
 */
export function loadConfigFor(
  carriers: readonly CarrierSettingsReader[],
  env: Env,
  opts: LoadOptions = {},
): Config {
  const cwd = opts.cwd ?? process.cwd();

  const port = envInt(env, 'PORT', { fallback: 8080, min: 0, max: 65_535 });
  const publicUrl = envUrl(env, 'PUBLIC_URL', BASE_URL(['http', 'https'])) ?? `http://127.0.0.1:${port}`;
  const region = envOneOf(env, 'REGION', REGIONS, 'global');
  const instanceId = readInstanceId(env, opts.hostname ?? hostname());
  const nodeEnv = envString(env, 'NODE_ENV') ?? 'development';
  const host = readHost(env, nodeEnv);
  const logLevel = envOneOf(env, 'LOG_LEVEL', LOG_LEVELS, 'info');
  const logTranscripts = envOneOf(env, 'LOG_TRANSCRIPTS', ['on', 'off'] as const, 'off') === 'on';
  const configDir = readConfigDir(env, cwd);
  const dataDir = resolve(cwd, envString(env, 'DATA_DIR') ?? './data');
  const redisUrl = readRedisUrl(env);
  const redisKeyPrefix = envString(env, 'REDIS_KEY_PREFIX') ?? 'callbridge:';
  // A hash tag in the prefix would put every key in one cluster slot (src/store/redis/keys.ts).
  if (/[{}]/.test(redisKeyPrefix))
    throw envError('REDIS_KEY_PREFIX', 'must not contain { or }', redisKeyPrefix);
  const carrierSettings = readCarriers(carriers, env, { nodeEnv, cwd });
  const streamTokenTtlMs = envInt(env, 'STREAM_TOKEN_TTL_MS', { fallback: 30_000, min: 1, max: 86_400_000 });
  const webhooks = readWebhooks(env, cwd);
  const trustProxy = readTrustProxy(env);
  const streamTokenSecret =
    envString(env, 'STREAM_TOKEN_SECRET') ?? deriveStreamTokenSecret(sharedCarrierSecret(carrierSettings));
  const adminToken = envString(env, 'ADMIN_TOKEN') ?? null;
  if (adminToken !== null && adminToken.length < 16) {
    throw envError('ADMIN_TOKEN', 'must be at least 16 characters');
  }
  const drainTimeoutMs = envInt(env, 'DRAIN_TIMEOUT_MS', { fallback: 600_000, min: 0 });
  const maxCalls = envInt(env, 'MAX_CALLS', { fallback: 1000, min: 1 });
  const declineRedirectUrl = envUrl(env, 'DECLINE_REDIRECT_URL', ENDPOINT_URL(['http', 'https'])) ?? null;
  const simulatedCalleeSpeedup = envInt(env, 'SIM_CALLEE_SPEEDUP', { fallback: 1, min: 1, max: 1000 });
  const simulatedCarrierApiUrl = envUrl(env, 'SIM_CARRIER_API_URL', BASE_URL(['http', 'https']));
  const dialerFailoverMs = envInt(env, 'DIALER_FAILOVER_MS', { fallback: 20_000, min: 1_000, max: 600_000 });
  const lostDispatchGraceMs = envInt(env, 'DIALER_LOST_DISPATCH_GRACE_MS', {
    fallback: 600_000,
    min: 1_000,
    max: 86_400_000,
  });
  const carrierPingIntervalMs = envInt(env, 'CARRIER_PING_INTERVAL_MS', {
    fallback: 15_000,
    min: 100,
    max: 600_000,
  });

  const dialPolicy = readDialPolicy(env);
  const fetchPolicy = readFetchPolicy(env);
  const recordings = readRecordingStore(env, dataDir);

  const regions = loadRegions(configDir, cwd);
  const agent = selectAgent(env, region, regions);
  const profiles = loadProfiles(configDir, cwd);
  const numbers = loadNumbers(configDir, cwd, profiles);
  const speech = readSpeech(env, configDir, cwd, agent.url === null);

  const base: Omit<Config, keyof CarrierConfigs> = {
    port,
    host,
    publicUrl,
    region,
    instanceId,
    nodeEnv,
    logLevel,
    logTranscripts,
    agent,
    configDir,
    dataDir,
    redisUrl,
    redisKeyPrefix,
    streamTokenSecret,
    streamTokenTtlMs,
    webhooks,
    trustProxy,
    adminToken,
    drainTimeoutMs,
    maxCalls,
    declineRedirectUrl,
    carrierPingIntervalMs,
    simulatedCalleeSpeedup,
    ...(simulatedCarrierApiUrl !== undefined ? { simulatedCarrierApiUrl } : {}),
    dialer: { failoverMs: dialerFailoverMs, lostDispatchGraceMs },
    recordings,
    regions,
    profiles,
    numbers,
    speech,
    dialPolicy,
    fetchPolicy,
  };
  const config: Record<string, unknown> = { ...base };
  for (const { name, settings } of carrierSettings) {
    // A carrier's settings sit beside the shared ones: a name already taken is a programming error.
    if (name in config) throw new Error(`a carrier cannot be named ${name}: the configuration has that key`);
    config[name] = settings;
  }
  return config as unknown as Config;
}

interface ReadCarrier {
  name: string;
  reader: CarrierSettingsReader;
  settings: unknown;
}

/**
 * Every carrier's settings, in the list's order. Production serves only carriers that verify their
 * requests, so it needs one at least; the first carrier of the list is the one the error names.
 */
function readCarriers(
  carriers: readonly CarrierSettingsReader[],
  env: Env,
  context: { nodeEnv: string; cwd: string },
): ReadCarrier[] {
  const read = carriers.map((reader) => ({ name: reader.name, reader, settings: reader.read(env, context) }));
  const first = carriers[0];
  if (
    context.nodeEnv === 'production' &&
    first &&
    !read.some(({ reader, settings }) => reader.verifies(settings))
  ) {
    const key = first.verifiedBy.at(-1)!;
    const withIt = first.verifiedBy.slice(0, -1);
    const others = carriers.slice(1).map((carrier) => carrier.verifiedBy.at(-1)!);
    throw envError(
      key,
      `required when NODE_ENV=production${withIt.length > 0 ? `, with ${withIt.join(', ')},` : ''} unless another ` +
        `carrier is configured (${others.join(', ')}), so carrier requests are verified`,
    );
  }
  return read;
}

/** The first shared secret in the list's order (Twilio's auth token first, as before). */
function sharedCarrierSecret(carriers: readonly ReadCarrier[]): string | null {
  for (const { reader, settings } of carriers) {
    const secret = reader.sharedSecret(settings);
    if (secret !== null) return secret;
  }
  return null;
}

function readRedisUrl(env: Env): string | null {
  const raw = envString(env, 'REDIS_URL');
  if (raw === undefined) return null;
  // Kept as written: the Redis client reads user, password, database and options from it.
  if (!/^rediss?:\/\/[^/?#]/.test(raw) || !URL.canParse(raw)) {
    throw envError('REDIS_URL', 'must be a redis:// or rediss:// URL', raw);
  }
  return raw;
}

/**
 * Instances behind one number must accept each other's stream tokens, so without an explicit key
 * they derive the same one from a carrier secret they already share (the first carrier's of the
 * list that has one: Twilio's auth token, then Telnyx's API key, Plivo's auth token, Vonage's
 * signature secret, Exotel's API token). With none, a random key suits a single process.
 */
export function deriveStreamTokenSecret(authToken: string | null): string {
  if (authToken === null) return randomBytes(32).toString('hex');
  return createHmac('sha256', authToken).update(STREAM_TOKEN_LABEL).digest('hex');
}

function readWebhooks(env: Env, cwd: string): Config['webhooks'] {
  const secrets: Record<string, string[]> = {};
  for (const [provider, name] of Object.entries(WEBHOOK_SECRET_VARS)) {
    const list = envList(env, name);
    if (list.length > 0) secrets[provider] = list;
  }

  const queuePilots: string[] = [];
  for (const pilot of envList(env, 'QUEUE_PILOTS')) {
    if (!(QUEUE_PILOT_PROVIDERS as readonly string[]).includes(pilot)) {
      throw envError('QUEUE_PILOTS', `each entry must be one of ${QUEUE_PILOT_PROVIDERS.join(', ')}`, pilot);
    }
    if (!queuePilots.includes(pilot)) queuePilots.push(pilot);
  }

  const secretsFile = envString(env, 'SECRETS_FILE');
  return {
    secrets,
    queuePilots,
    operatorGatewayUrl: envUrl(env, 'OPERATOR_GATEWAY_URL', ENDPOINT_URL(['http', 'https'])) ?? null,
    operatorGatewaySecret: envString(env, 'OPERATOR_GATEWAY_SECRET') ?? null,
    bodyLimitBytes: envInt(env, 'WEBHOOK_BODY_LIMIT_BYTES', {
      fallback: 1_048_576,
      min: 1,
      max: 104_857_600,
    }),
    secretsFile: secretsFile === undefined ? null : resolve(cwd, secretsFile),
  };
}

function readTrustProxy(env: Env): string[] | false {
  const entries = envList(env, 'TRUST_PROXY');
  for (const entry of entries) {
    if (!isAddressOrCidr(entry))
      throw envError('TRUST_PROXY', 'each entry must be an IP address or CIDR', entry);
  }
  return entries.length > 0 ? entries : false;
}

/**
 * `CONFIG_DIR` (default `./config`), which must be a folder: a missing one is named as such, not as
 * the first file read from it.
 */
function readConfigDir(env: Env, cwd: string): string {
  const given = envString(env, 'CONFIG_DIR');
  const dir = resolve(cwd, given ?? './config');
  const kind = statSync(dir, { throwIfNoEntry: false });
  if (kind?.isDirectory()) return dir;
  const problem = kind ? 'is not a folder' : 'no such folder';
  if (given !== undefined) throw envError('CONFIG_DIR', `${problem} (${dir})`, given);
  throw envError('CONFIG_DIR', `not set, and the default ${displayPath(dir, cwd)}: ${problem} (${dir})`);
}
