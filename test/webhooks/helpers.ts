// A small real Fastify app around the webhook gateway plugin, with the app's error format, a real
// SQLite store in a temporary folder and a fake operator gateway. Signatures here are made with
// node:crypto directly, never with the project's code.
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyError, type FastifyInstance } from 'fastify';
import { afterEach, beforeEach } from 'vitest';
import pino from 'pino';
import { loadConfig } from '../../src/carriers/load-config.js';
import type { Config } from '../../src/config/types.js';
import { codeForStatus } from '../../src/errors.js';
import { createMetrics, type Metrics } from '../../src/metrics/metrics.js';
import { openSqliteStore } from '../../src/store/sqlite.js';
import type { Store } from '../../src/store/store.js';
import {
  registerWebhookAdminRoutes,
  type WebhookGateway,
  type WebhookGatewayDeps,
  webhookGateway,
} from '../../src/webhooks/plugin.js';

export const SECRETS = {
  tasks: ['tasks-secret-1', 'tasks-secret-2'],
  inbox: ['inbox-app-secret-1', 'inbox-app-secret-2'],
  inbox_rules: ['inbox-rules-secret-1', 'inbox-rules-secret-2'],
  deploy: ['deploy-secret-1', 'deploy-secret-2'],
  code: ['code-secret-1', 'code-secret-2'],
  payments: ['whsec_payments_1', 'whsec_payments_2'],
} as const;

/** Config as production builds it, from an environment object. */
export function gatewayConfig(env: Record<string, string> = {}, dataDir?: string): Config {
  return loadConfig({
    LOG_LEVEL: 'silent',
    DATA_DIR: dataDir ?? tmpdir(),
    WEBHOOK_SECRET_TASKS: SECRETS.tasks.join(','),
    WEBHOOK_SECRET_INBOX: SECRETS.inbox.join(','),
    WEBHOOK_SECRET_INBOX_RULES: SECRETS.inbox_rules.join(','),
    WEBHOOK_SECRET_DEPLOY: SECRETS.deploy.join(','),
    WEBHOOK_SECRET_CODE: SECRETS.code.join(','),
    WEBHOOK_SECRET_PAYMENTS: SECRETS.payments.join(','),
    ...env,
  });
}

export interface GatewayApp {
  app: FastifyInstance;
  gateway: WebhookGateway;
  store: Store;
  metrics: Metrics;
  config: Config;
  close(): Promise<void>;
}

export interface GatewayAppOptions {
  env?: Record<string, string>;
  /** Applied over the loaded config. */
  configure?: (config: Config) => Config;
  store?: Store;
  options?: WebhookGatewayDeps['options'];
  trustProxy?: string[] | false;
  /** Mount the admin routes under /v1 (no auth here: the app's /v1 scope provides it). */
  admin?: boolean;
  logger?: WebhookGatewayDeps['logger'];
}

/** The app's error handler, as src/app.ts has it: `{"error": {"code", "message"}}`. */
function renderErrors(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, _req, reply) => {
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 600 ? err.statusCode : 500;
    const ours = typeof err.code === 'string' && err.code.startsWith('CALLBRIDGE_');
    const message = status >= 500 && !ours ? 'internal error' : err.message;
    return reply.code(status).send({ error: { code: ours ? err.code : codeForStatus(status), message } });
  });
}

export async function startGatewayApp(opts: GatewayAppOptions = {}): Promise<GatewayApp> {
  const dataDir = mkdtempSync(join(tmpdir(), 'callbridge-webhooks-'));
  const loaded = gatewayConfig(opts.env, dataDir);
  const config = opts.configure ? opts.configure(loaded) : loaded;
  const store = opts.store ?? openSqliteStore({ file: join(dataDir, 'callbridge.db') });
  const metrics = createMetrics('global');
  const gateway = webhookGateway({
    config,
    store,
    metrics,
    logger: opts.logger ?? pino({ level: 'silent' }),
    options: opts.options,
  });
  const app = Fastify({ trustProxy: opts.trustProxy ?? config.trustProxy });
  renderErrors(app);
  await app.register(gateway.plugin);
  if (opts.admin) {
    await app.register(
      async (v1) => {
        // The routes alone, without the admin scope's keys and audit log (src/admin/plugin.ts).
        v1.decorateRequest('audit', async () => {});
        registerWebhookAdminRoutes(v1, { store });
      },
      { prefix: '/v1' },
    );
  }
  await app.ready();
  return {
    app,
    gateway,
    store,
    metrics,
    config,
    async close() {
      await gateway.close();
      await app.close();
      if (!opts.store) await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface RecordedRequest {
  /** performance.now() when the request arrived. */
  receivedAt: number;
  headers: IncomingHttpHeaders;
  body: string;
  json: Record<string, unknown>;
}

export interface FakeOperatorGateway {
  url: string;
  requests: RecordedRequest[];
  /** Status for the next requests; a function decides per request. */
  respondWith(status: number | ((n: number) => number)): void;
  /** Holds every answer until `release()` (to catch concurrent work in the act). */
  hold(): void;
  release(): void;
  waitForRequests(count: number, timeoutMs?: number): Promise<RecordedRequest[]>;
  close(): Promise<void>;
}

/** A real HTTP server on an ephemeral loopback port, recording what it receives. */
export async function startFakeOperatorGateway(): Promise<FakeOperatorGateway> {
  const requests: RecordedRequest[] = [];
  let status: number | ((n: number) => number) = 200;
  let held: (() => void)[] | null = null;
  const server = createServer((req, res) => {
    const receivedAt = performance.now();
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      requests.push({
        receivedAt,
        headers: req.headers,
        body,
        json: JSON.parse(body) as Record<string, unknown>,
      });
      const code = typeof status === 'function' ? status(requests.length) : status;
      const answer = () => res.writeHead(code, { 'content-type': 'application/json' }).end('{}');
      if (held) held.push(answer);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const release = () => {
    const pending = held ?? [];
    held = null;
    for (const answer of pending) answer();
  };
  return {
    url: `http://127.0.0.1:${port}/events`,
    requests,
    respondWith(next) {
      status = next;
    },
    hold() {
      held = [];
    },
    release,
    waitForRequests: (count, timeoutMs = 10_000) =>
      waitUntil(() => requests.length >= count, timeoutMs, `${count} operator gateway requests`).then(
        () => requests,
      ),
    async close() {
      release();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export async function waitUntil(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export function hmacOf(algorithm: 'sha1' | 'sha256', secret: string, data: string | Buffer) {
  return createHmac(algorithm, secret).update(data).digest();
}

/** The value of a counter or gauge with these labels in the registry. */
export async function metricValue(metrics: Metrics, name: string, labels: Record<string, string> = {}) {
  const metric = metrics.registry.getSingleMetric(name);
  if (!metric) throw new Error(`no metric ${name}`);
  const { values } = await metric.get();
  const match = values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l));
  return match?.value ?? 0;
}

/** Reads until `accept` holds; returns the accepted value. */
export async function eventually<T>(
  read: () => Promise<T>,
  accept: (value: T) => boolean,
  what: string,
  timeoutMs = 5_000,
) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (accept(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 15));
  }
}

/**
 * A gateway app and the fake operator gateway it forwards to, fresh for each test of the enclosing
 * describe; `use` receives both once they are up.
 */
export function useGatewayWithOperator(use: (gw: GatewayApp, operator: FakeOperatorGateway) => void): void {
  let gw: GatewayApp;
  let operator: FakeOperatorGateway;
  beforeEach(async () => {
    operator = await startFakeOperatorGateway();
    gw = await startGatewayApp({ env: { OPERATOR_GATEWAY_URL: operator.url } });
    use(gw, operator);
  });
  afterEach(async () => {
    await gw.close();
    await operator.close();
  });
}
