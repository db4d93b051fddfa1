import { createHmac } from 'node:crypto';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readHost } from '../../src/config/listen.js';
import { loadConfig } from '../../src/carriers/load-config.js';
import {
  configErrorOf,
  load,
  MINIMAL_PROFILE,
  MINIMAL_PROJECT,
  makeProject,
  REGIONS_JSON,
  removeProjects,
} from './project.js';

afterEach(removeProjects);

const SID = `AC${'0123456789abcdef'.repeat(2)}`;

describe('environment defaults', () => {
  it('fills every setting when the environment is empty', () => {
    const config = load({});
    expect(config.port).toBe(8080);
    expect(config.host).toBe('127.0.0.1');
    expect(config.publicUrl).toBe('http://127.0.0.1:8080');
    expect(config.region).toBe('global');
    expect(config.nodeEnv).toBe('development');
    expect(config.logLevel).toBe('info');
    expect(config.configDir).toBe(join(MINIMAL_PROJECT, 'config'));
    expect(config.dataDir).toBe(join(MINIMAL_PROJECT, 'data'));
    expect(config.redisUrl).toBeNull();
    expect(config.redisKeyPrefix).toBe('callbridge:');
    expect(config.twilio).toEqual({ accountSid: null, authToken: null, apiUrl: 'https://api.twilio.com' });
    expect(config.streamTokenSecret).toMatch(/^[0-9a-f]{64}$/);
    expect(config.streamTokenTtlMs).toBe(30_000);
    expect(config.webhooks).toEqual({
      secrets: {},
      queuePilots: [],
      operatorGatewayUrl: null,
      operatorGatewaySecret: null,
      bodyLimitBytes: 1_048_576,
      secretsFile: null,
    });
    expect(config.trustProxy).toBe(false);
    expect(config.adminToken).toBeNull();
    expect(config.drainTimeoutMs).toBe(600_000);
    expect(config.maxCalls).toBe(1000);
  });

  it('treats a blank value like an unset one', () => {
    const config = load({ PORT: '', HOST: '  ', LOG_LEVEL: '', MAX_CALLS: ' ' });
    expect(config.port).toBe(8080);
    expect(config.host).toBe('127.0.0.1');
    expect(config.logLevel).toBe('info');
    expect(config.maxCalls).toBe(1000);
  });
});

describe('PORT and HOST', () => {
  it('accepts PORT=0 for an ephemeral port', () => {
    expect(load({ PORT: '0' }).port).toBe(0);
  });

  it('trims the value', () => {
    expect(load({ PORT: ' 9000 ' }).port).toBe(9000);
  });

  it.each(['80a', '65536', '-1', '1.5', '0x50'])('rejects PORT=%s naming the variable and value', (value) => {
    expect(configErrorOf(() => load({ PORT: value })).message).toBe(
      `PORT: must be an integer from 0 to 65535, got "${value}"`,
    );
  });

  // Development may run with unverified webhooks: by default only this machine reaches them.
  it('listens on loopback by default in development, on every interface under production', () => {
    expect(load({}).host).toBe('127.0.0.1');
    expect(load({ NODE_ENV: 'test' }).host).toBe('127.0.0.1');
    expect(readHost({}, 'production')).toBe('0.0.0.0');
    expect(readHost({ HOST: '10.0.0.7' }, 'production')).toBe('10.0.0.7');
    expect(load({ HOST: '0.0.0.0' }).host).toBe('0.0.0.0');
  });

  it('keeps HOST as given', () => {
    expect(load({ HOST: '127.0.0.1' }).host).toBe('127.0.0.1');
  });

  it.each(['0.0.0.0', '::', '::1', '10.1.2.3', 'localhost', 'bridge-1.internal', 'host.example.com.'])(
    'accepts HOST=%s',
    (value) => {
      expect(load({ HOST: value }).host).toBe(value);
    },
  );

  // HOST=999.1.1.1 once passed validation and failed at listen with a stack trace.
  it.each([
    '999.1.1.1',
    '1.2.3',
    '256.0.0.1',
    '-bad.example',
    'a_b.example',
    'host name',
    `${'a'.repeat(64)}.x`,
  ])('rejects HOST=%s in one line naming the variable', (value) => {
    expect(configErrorOf(() => load({ HOST: value })).message).toBe(
      `HOST: must be an IP address or a host name, got ${JSON.stringify(value)}`,
    );
  });
});

// A missing config folder is named as the folder, not as the first file read from it.
describe('CONFIG_DIR', () => {
  it('names a CONFIG_DIR that does not exist', () => {
    const message = configErrorOf(() => load({ CONFIG_DIR: './nowhere' })).message;
    expect(message).toBe(`CONFIG_DIR: no such folder (${join(MINIMAL_PROJECT, 'nowhere')}), got "./nowhere"`);
  });

  it('names a CONFIG_DIR that is a file', () => {
    const message = configErrorOf(() => load({ CONFIG_DIR: './config/regions.json' })).message;
    expect(message).toMatch(
      /^CONFIG_DIR: is not a folder \(.*regions\.json\), got "\.\/config\/regions\.json"$/,
    );
  });

  it('names the default folder when CONFIG_DIR is unset and ./config is missing', () => {
    const empty = makeProject({ config: null });
    const message = configErrorOf(() => loadConfig({}, { cwd: empty })).message;
    expect(message).toBe(
      `CONFIG_DIR: not set, and the default config: no such folder (${join(empty, 'config')})`,
    );
  });
});

describe('INSTANCE_ID', () => {
  it('defaults to the host name', () => {
    expect(loadConfig({}, { cwd: MINIMAL_PROJECT, hostname: 'pod-7f9c' }).instanceId).toBe('pod-7f9c');
  });

  it('takes INSTANCE_ID over the host name', () => {
    expect(loadConfig({ INSTANCE_ID: 'eu-1' }, { cwd: MINIMAL_PROJECT, hostname: 'pod' }).instanceId).toBe(
      'eu-1',
    );
  });

  it.each(['a/b', 'a b', '../x', '-lead', `${'x'.repeat(129)}`, 'é'])(
    'rejects INSTANCE_ID=%s, which must fit in a URL path segment',
    (value) => {
      expect(configErrorOf(() => load({ INSTANCE_ID: value })).message).toMatch(
        /^INSTANCE_ID: must be 1 to 128/,
      );
    },
  );

  it('names INSTANCE_ID when the host name cannot stand in for it', () => {
    expect(
      configErrorOf(() => loadConfig({}, { cwd: MINIMAL_PROJECT, hostname: 'bad/host' })).message,
    ).toMatch(/^INSTANCE_ID: not set, and the host name cannot stand in for it/);
  });
});

describe('PUBLIC_URL', () => {
  it('defaults to the local address on PORT', () => {
    expect(load({ PORT: '9000' }).publicUrl).toBe('http://127.0.0.1:9000');
  });

  it('drops trailing slashes', () => {
    expect(load({ PUBLIC_URL: 'https://calls.example.com/' }).publicUrl).toBe('https://calls.example.com');
    expect(load({ PUBLIC_URL: 'https://calls.example.com/bridge/' }).publicUrl).toBe(
      'https://calls.example.com/bridge',
    );
  });

  it.each([
    'ftp://calls.example.com',
    'https://calls.example.com/?a=1',
    'https://calls.example.com/#top',
    'calls.example.com',
  ])('rejects %s', (value) => {
    expect(configErrorOf(() => load({ PUBLIC_URL: value })).message).toBe(
      `PUBLIC_URL: must be an http or https URL with no query or fragment, got "${value}"`,
    );
  });
});

describe('REGION, LOG_LEVEL, NODE_ENV', () => {
  it('rejects an unknown region', () => {
    expect(configErrorOf(() => load({ REGION: 'mars' })).message).toBe(
      'REGION: must be one of global, eu, au, in, got "mars"',
    );
  });

  it('accepts every pino level and rejects others', () => {
    for (const level of ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']) {
      expect(load({ LOG_LEVEL: level }).logLevel).toBe(level);
    }
    expect(configErrorOf(() => load({ LOG_LEVEL: 'verbose' })).message).toBe(
      'LOG_LEVEL: must be one of fatal, error, warn, info, debug, trace, silent, got "verbose"',
    );
  });

  it('keeps NODE_ENV', () => {
    expect(load({ NODE_ENV: 'test' }).nodeEnv).toBe('test');
  });

  it('keeps transcripts out of logs unless LOG_TRANSCRIPTS=on', () => {
    expect(load({}).logTranscripts).toBe(false);
    expect(load({ LOG_TRANSCRIPTS: '' }).logTranscripts).toBe(false);
    expect(load({ LOG_TRANSCRIPTS: 'off' }).logTranscripts).toBe(false);
    expect(load({ LOG_TRANSCRIPTS: 'on' }).logTranscripts).toBe(true);
    expect(configErrorOf(() => load({ LOG_TRANSCRIPTS: 'yes' })).message).toBe(
      'LOG_TRANSCRIPTS: must be one of on, off, got "yes"',
    );
  });
});

describe('CONFIG_DIR, DATA_DIR, REDIS_URL', () => {
  it('resolves relative folders against the working directory', () => {
    const root = makeProject();
    const config = load({ DATA_DIR: 'var/db' }, root);
    expect(config.dataDir).toBe(join(root, 'var/db'));
    expect(config.configDir).toBe(join(root, 'config'));
  });

  it('reads the config folder CONFIG_DIR names, relative or absolute', () => {
    const root = makeProject({
      'other/regions.json': REGIONS_JSON,
      'other/agents/only.json': MINIMAL_PROFILE,
      'other/numbers.json': { default: 'only' },
    });
    expect(Object.keys(load({ CONFIG_DIR: 'other' }, root).profiles)).toEqual(['only']);
    expect(load({ CONFIG_DIR: join(root, 'other') }, MINIMAL_PROJECT).configDir).toBe(join(root, 'other'));
  });

  it('keeps a redis:// or rediss:// URL as written', () => {
    expect(load({ REDIS_URL: 'redis://127.0.0.1:6379/2' }).redisUrl).toBe('redis://127.0.0.1:6379/2');
    expect(load({ REDIS_URL: 'rediss://:pw@cache.example.com:6380' }).redisUrl).toBe(
      'rediss://:pw@cache.example.com:6380',
    );
  });

  it('reads REDIS_KEY_PREFIX', () => {
    expect(load({ REDIS_KEY_PREFIX: 'cb-staging:' }).redisKeyPrefix).toBe('cb-staging:');
  });

  it('refuses a REDIS_KEY_PREFIX with a hash tag, which would put every key in one cluster slot', () => {
    for (const prefix of ['{callbridge}:', 'cb{eu:', 'cb}:']) {
      expect(configErrorOf(() => load({ REDIS_KEY_PREFIX: prefix })).message).toMatch(
        /^REDIS_KEY_PREFIX: must not contain \{ or \}/,
      );
    }
  });

  it('rejects another scheme without quoting a password', () => {
    const message = configErrorOf(() => load({ REDIS_URL: 'http://user:hunter2@cache.example.com' })).message;
    expect(message).toBe(
      'REDIS_URL: must be a redis:// or rediss:// URL, got "http://***:***@cache.example.com/"',
    );
    expect(message).not.toContain('hunter2');
  });
});

describe('Twilio credentials', () => {
  it('takes both together', () => {
    const config = load({ TWILIO_ACCOUNT_SID: SID, TWILIO_AUTH_TOKEN: 'tok-123' });
    expect(config.twilio).toEqual({
      accountSid: SID,
      authToken: 'tok-123',
      apiUrl: 'https://api.twilio.com',
    });
  });

  it('rejects a malformed account SID', () => {
    expect(configErrorOf(() => load({ TWILIO_ACCOUNT_SID: 'AC123', TWILIO_AUTH_TOKEN: 't' })).message).toBe(
      'TWILIO_ACCOUNT_SID: must be AC followed by 32 hexadecimal digits, got "AC123"',
    );
  });

  it('rejects a SID without a token, and a token without a SID', () => {
    expect(configErrorOf(() => load({ TWILIO_ACCOUNT_SID: SID })).message).toBe(
      'TWILIO_AUTH_TOKEN: required when TWILIO_ACCOUNT_SID is set',
    );
    expect(configErrorOf(() => load({ TWILIO_AUTH_TOKEN: 'tok-secret-value' })).message).toBe(
      'TWILIO_ACCOUNT_SID: required when TWILIO_AUTH_TOKEN is set',
    );
  });

  it('refuses production without credentials', () => {
    expect(configErrorOf(() => load({ NODE_ENV: 'production' })).message).toMatch(
      /^TWILIO_AUTH_TOKEN: required when NODE_ENV=production/,
    );
    const config = load({ NODE_ENV: 'production', TWILIO_ACCOUNT_SID: SID, TWILIO_AUTH_TOKEN: 'tok' });
    expect(config.nodeEnv).toBe('production');
  });

  it('takes TWILIO_API_URL without a trailing slash and checks it', () => {
    expect(load({ TWILIO_API_URL: 'http://127.0.0.1:4010/' }).twilio.apiUrl).toBe('http://127.0.0.1:4010');
    expect(configErrorOf(() => load({ TWILIO_API_URL: 'api.twilio.com' })).message).toBe(
      'TWILIO_API_URL: must be an http or https URL with no query or fragment, got "api.twilio.com"',
    );
  });
});

describe('stream token key', () => {
  it('uses STREAM_TOKEN_SECRET when set', () => {
    expect(
      load({ STREAM_TOKEN_SECRET: 'shared-key', TWILIO_ACCOUNT_SID: SID, TWILIO_AUTH_TOKEN: 't' }),
    ).toMatchObject({
      streamTokenSecret: 'shared-key',
    });
  });

  it('derives the same key from the same auth token, so instances agree', () => {
    const env = { TWILIO_ACCOUNT_SID: SID, TWILIO_AUTH_TOKEN: 'token-a' };
    const first = load(env).streamTokenSecret;
    expect(load(env).streamTokenSecret).toBe(first);
    expect(first).toMatch(/^[0-9a-f]{64}$/);
    expect(first).not.toContain('token-a');
    expect(load({ ...env, TWILIO_AUTH_TOKEN: 'token-b' }).streamTokenSecret).not.toBe(first);
    // HMAC keyed by the token, not a plain hash of it.
    expect(first).not.toBe(createHmac('sha256', 'x').update('token-a').digest('hex'));
  });

  it('derives the key from another carrier secret for deployments without Twilio', () => {
    const telnyx = { TELNYX_API_KEY: 'KEY-telnyx' };
    expect(load(telnyx).streamTokenSecret).toBe(load(telnyx).streamTokenSecret);
    expect(load(telnyx).streamTokenSecret).not.toContain('KEY-telnyx');
    const plivo = { PLIVO_AUTH_ID: 'MAXXXXXXXXXXXXXXXXXX', PLIVO_AUTH_TOKEN: 'plivo-token' };
    expect(load(plivo).streamTokenSecret).toBe(load(plivo).streamTokenSecret);
    expect(load(plivo).streamTokenSecret).not.toBe(load(telnyx).streamTokenSecret);
    // Twilio's token, when present, is the one the key comes from, as before.
    const both = { ...telnyx, TWILIO_ACCOUNT_SID: SID, TWILIO_AUTH_TOKEN: 'token-a' };
    expect(load(both).streamTokenSecret).toBe(
      load({ TWILIO_ACCOUNT_SID: SID, TWILIO_AUTH_TOKEN: 'token-a' }).streamTokenSecret,
    );
  });

  it('makes a random key per process when there is nothing to derive it from', () => {
    expect(load({}).streamTokenSecret).not.toBe(load({}).streamTokenSecret);
  });

  it('reads STREAM_TOKEN_TTL_MS', () => {
    expect(load({ STREAM_TOKEN_TTL_MS: '5000' }).streamTokenTtlMs).toBe(5000);
    expect(configErrorOf(() => load({ STREAM_TOKEN_TTL_MS: '0' })).message).toBe(
      'STREAM_TOKEN_TTL_MS: must be an integer from 1 to 86400000, got "0"',
    );
  });
});

describe('webhooks', () => {
  it('splits each secret list and keys it by provider', () => {
    const config = load({
      WEBHOOK_SECRET_TASKS: ' new-1 , old-1 ,, ',
      WEBHOOK_SECRET_INBOX: 'i',
      WEBHOOK_SECRET_INBOX_RULES: 'r',
      WEBHOOK_SECRET_DEPLOY: 'd',
      WEBHOOK_SECRET_CODE: 'c',
      WEBHOOK_SECRET_PAYMENTS: 'p1,p2',
    });
    expect(config.webhooks.secrets).toEqual({
      tasks: ['new-1', 'old-1'],
      inbox: ['i'],
      inbox_rules: ['r'],
      deploy: ['d'],
      code: ['c'],
      payments: ['p1', 'p2'],
    });
  });

  it('omits providers whose list holds no secret', () => {
    expect(load({ WEBHOOK_SECRET_CODE: ' , ', WEBHOOK_SECRET_DEPLOY: 'd' }).webhooks.secrets).toEqual({
      deploy: ['d'],
    });
  });

  it('reads QUEUE_PILOTS and rejects providers without a queue', () => {
    expect(load({ QUEUE_PILOTS: 'tasks, payments,tasks' }).webhooks.queuePilots).toEqual([
      'tasks',
      'payments',
    ]);
    expect(configErrorOf(() => load({ QUEUE_PILOTS: 'tasks,inbox_rules' })).message).toBe(
      'QUEUE_PILOTS: each entry must be one of tasks, inbox, deploy, code, payments, got "inbox_rules"',
    );
  });

  it('reads OPERATOR_GATEWAY_URL', () => {
    expect(
      load({ OPERATOR_GATEWAY_URL: 'https://ops.example.com/events?src=cb' }).webhooks.operatorGatewayUrl,
    ).toBe('https://ops.example.com/events?src=cb');
    expect(configErrorOf(() => load({ OPERATOR_GATEWAY_URL: 'ws://ops.example.com' })).message).toBe(
      'OPERATOR_GATEWAY_URL: must be an http or https URL with no fragment, got "ws://ops.example.com"',
    );
  });

  it('reads OPERATOR_GATEWAY_SECRET', () => {
    expect(load({ OPERATOR_GATEWAY_SECRET: 'ops-key' }).webhooks.operatorGatewaySecret).toBe('ops-key');
  });

  it('reads WEBHOOK_BODY_LIMIT_BYTES and SECRETS_FILE', () => {
    const config = load({ WEBHOOK_BODY_LIMIT_BYTES: '2048', SECRETS_FILE: 'secrets/webhooks.json' });
    expect(config.webhooks.bodyLimitBytes).toBe(2048);
    expect(config.webhooks.secretsFile).toBe(join(MINIMAL_PROJECT, 'secrets/webhooks.json'));
    expect(configErrorOf(() => load({ WEBHOOK_BODY_LIMIT_BYTES: '0' })).message).toBe(
      'WEBHOOK_BODY_LIMIT_BYTES: must be an integer from 1 to 104857600, got "0"',
    );
  });
});

describe('TRUST_PROXY', () => {
  it('takes addresses and CIDRs of both families', () => {
    expect(load({ TRUST_PROXY: '127.0.0.1, 10.0.0.0/8, ::1, fd00::/8' }).trustProxy).toEqual([
      '127.0.0.1',
      '10.0.0.0/8',
      '::1',
      'fd00::/8',
    ]);
  });

  it('is false when it lists nothing', () => {
    expect(load({ TRUST_PROXY: ' , ' }).trustProxy).toBe(false);
  });

  it.each(['10.0.0.0/33', 'fd00::/129', 'proxy.example.com', '10.0.0.1/8/1', '10.0.0.0/', '10.0.0.0/x'])(
    'rejects %s',
    (entry) => {
      expect(configErrorOf(() => load({ TRUST_PROXY: `127.0.0.1,${entry}` })).message).toBe(
        `TRUST_PROXY: each entry must be an IP address or CIDR, got "${entry}"`,
      );
    },
  );
});

describe('ADMIN_TOKEN, DRAIN_TIMEOUT_MS, MAX_CALLS', () => {
  it('takes an admin token of 16 characters or more', () => {
    expect(load({ ADMIN_TOKEN: 'a'.repeat(16) }).adminToken).toBe('a'.repeat(16));
    expect(configErrorOf(() => load({ ADMIN_TOKEN: 'short-admin' })).message).toBe(
      'ADMIN_TOKEN: must be at least 16 characters',
    );
  });

  it('keeps DRAIN_TIMEOUT_MS=0', () => {
    expect(load({ DRAIN_TIMEOUT_MS: '0' }).drainTimeoutMs).toBe(0);
    expect(configErrorOf(() => load({ DRAIN_TIMEOUT_MS: '-5' })).message).toBe(
      'DRAIN_TIMEOUT_MS: must be an integer >= 0, got "-5"',
    );
  });

  it('rejects MAX_CALLS=0', () => {
    expect(load({ MAX_CALLS: '5' }).maxCalls).toBe(5);
    expect(configErrorOf(() => load({ MAX_CALLS: '0' })).message).toBe(
      'MAX_CALLS: must be an integer >= 1, got "0"',
    );
  });
});

describe('campaign dialing across instances', () => {
  it('defaults to a 20 s failover and a 10 min grace for lost dispatches', () => {
    const config = load({});
    expect(config.dialer).toEqual({ failoverMs: 20_000, lostDispatchGraceMs: 600_000 });
    expect(config.simulatedCarrierApiUrl).toBeUndefined();
  });

  it('reads DIALER_FAILOVER_MS and DIALER_LOST_DISPATCH_GRACE_MS within their bounds', () => {
    const config = load({ DIALER_FAILOVER_MS: '3000', DIALER_LOST_DISPATCH_GRACE_MS: '5000' });
    expect(config.dialer).toEqual({ failoverMs: 3_000, lostDispatchGraceMs: 5_000 });
    expect(configErrorOf(() => load({ DIALER_FAILOVER_MS: '999' })).message).toBe(
      'DIALER_FAILOVER_MS: must be an integer from 1000 to 600000, got "999"',
    );
    expect(configErrorOf(() => load({ DIALER_FAILOVER_MS: '600001' })).message).toBe(
      'DIALER_FAILOVER_MS: must be an integer from 1000 to 600000, got "600001"',
    );
    expect(configErrorOf(() => load({ DIALER_FAILOVER_MS: '2s' })).message).toMatch(
      /^DIALER_FAILOVER_MS: must be an integer/,
    );
    expect(configErrorOf(() => load({ DIALER_LOST_DISPATCH_GRACE_MS: '0' })).message).toBe(
      'DIALER_LOST_DISPATCH_GRACE_MS: must be an integer from 1000 to 86400000, got "0"',
    );
  });

  it('takes SIM_CARRIER_API_URL without a trailing slash and checks it', () => {
    expect(load({ SIM_CARRIER_API_URL: 'http://127.0.0.1:4010/' }).simulatedCarrierApiUrl).toBe(
      'http://127.0.0.1:4010',
    );
    expect(configErrorOf(() => load({ SIM_CARRIER_API_URL: '127.0.0.1:4010' })).message).toMatch(
      /^SIM_CARRIER_API_URL: must be an http or https URL/,
    );
  });
});
