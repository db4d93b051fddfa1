// docs/deploy-kubernetes.md's example starts: each `create secret generic callbridge-secrets`
// command it shows, with stand-ins for the values it leaves out, beside the base's ConfigMap, is
// the environment of a pod; the real entry point started with it answers /readyz. A variable the
// page names that callbridge cannot start with, or a carrier it leaves half-configured (a Twilio
// token without its account, once), fails here.
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDIS_URL, redisAvailable } from '../helpers/redis.js';
import { disposeAll, ensureBuilt, ROOT, spawnServer, status } from '../helpers/server-process.js';

const PAGE = readFileSync(join(ROOT, 'docs/deploy-kubernetes.md'), 'utf8');
const KUSTOMIZATION = parseYaml(
  readFileSync(join(ROOT, 'deploy/kubernetes/base/kustomization.yaml'), 'utf8'),
) as {
  configMapGenerator: Array<{ name: string; literals?: string[] }>;
};

function telnyxPublicKey(): string {
  const jwk = generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' });
  return Buffer.from(jwk.x!, 'base64url').toString('base64');
}

/** What an operator would put where the page writes `…`, in each variable's own form. */
const STAND_INS: Record<string, () => string> = {
  ADMIN_TOKEN: () => 'admin-token-of-the-kubernetes-example',
  AGENT_API_KEY: () => 'agent-key-of-the-kubernetes-example',
  STREAM_TOKEN_SECRET: () => 'stream-token-secret-of-the-kubernetes-example',
  TWILIO_ACCOUNT_SID: () => `AC${'5'.repeat(32)}`,
  TWILIO_AUTH_TOKEN: () => 'twilio-auth-token-of-the-kubernetes-example',
  TELNYX_API_KEY: () => 'KEY-of-the-kubernetes-example',
  TELNYX_PUBLIC_KEY: telnyxPublicKey,
  TELNYX_CONNECTION_ID: () => '1293384261075731499',
};

/** Each command of the page that creates the secrets, as the variable names it sets. */
function secretCommands(): string[][] {
  const joined = PAGE.replace(/\\\n\s*/g, ' ');
  return [...joined.matchAll(/create secret generic callbridge-secrets([^\n`]*)/g)].map((match) =>
    [...match[1]!.matchAll(/--from-literal=([A-Z0-9_]+)=/g)].map((literal) => literal[1]!),
  );
}

function configMap(): Record<string, string> {
  const literals =
    KUSTOMIZATION.configMapGenerator.find((c) => c.name === 'callbridge-config')?.literals ?? [];
  return Object.fromEntries(
    literals.map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
}

const redis = await redisAvailable();
if (!redis) console.warn(`kubernetes example: no Redis at ${REDIS_URL}, skipped (the pods require one)`);

beforeAll(ensureBuilt, 180_000);
afterAll(disposeAll);

describe.skipIf(!redis)("docs/deploy-kubernetes.md's example", () => {
  it('shows the secrets of a Twilio and of a Telnyx deployment', () => {
    const commands = secretCommands();
    expect(commands.length).toBeGreaterThanOrEqual(2);
    expect(commands.some((names) => names.includes('TWILIO_AUTH_TOKEN'))).toBe(true);
    expect(
      commands.some(
        (names) => names.includes('TELNYX_PUBLIC_KEY') && !names.some((n) => n.startsWith('TWILIO_')),
      ),
    ).toBe(true);
  });

  it.each(
    secretCommands().map((names) => [names.filter((n) => /^(TWILIO|TELNYX)_/.test(n)).join(', '), names]),
  )(
    'starts with the secrets %s and the base ConfigMap',
    async (_carriers, names) => {
      const secrets = Object.fromEntries(
        (names as string[]).map((name) => {
          const standIn = STAND_INS[name];
          if (standIn === undefined) throw new Error(`the page sets ${name}: give it a stand-in here`);
          return [name, standIn()];
        }),
      );
      // The pod listens at 8080; the test server at the free port spawnServer picks.
      const { PORT: _port, ...settings } = configMap();
      const server = await spawnServer(
        {
          ...settings,
          ...secrets,
          // What the StatefulSet adds: the pod's name and the Redis URL from its own Secret.
          INSTANCE_ID: 'callbridge-0',
          REDIS_URL,
          REDIS_KEY_PREFIX: `callbridge-k8s-example-${process.pid}-${Date.now()}:`,
          // The pod listens on every interface; a test stays on loopback.
          HOST: '127.0.0.1',
        },
        { readyTimeoutMs: 30_000 },
      );
      expect(await status(server.baseUrl, '/readyz')).toBe(200);
      expect(server.output()).not.toContain('invalid configuration');
      await server.dispose();
    },
    60_000,
  );
});
