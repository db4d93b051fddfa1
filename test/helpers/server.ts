// Starts a real callbridge app on an ephemeral loopback port, configured like production through
// loadConfig, with its store in a fresh temporary DATA_DIR.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import pino, { type Logger } from 'pino';
import { createAgentDialer } from '../../src/agent/dialer.js';
import { type AppDeps, buildApp } from '../../src/app.js';
import type { CarrierAdapter } from '../../src/call/carrier-port.js';
import type { Carrier } from '../../src/carriers/carrier.js';
import { simulationKeysFor } from '../../src/carriers/simulation-keys.js';
import { loadConfig } from '../../src/carriers/load-config.js';
import type { Config } from '../../src/config/types.js';
import { createMetrics, type Metrics } from '../../src/metrics/metrics.js';
import type { DialerOptions } from '../../src/outbound/dialer.js';
import type { Originator } from '../../src/outbound/ports.js';
import { openStore } from '../../src/store/index.js';
import type { Store } from '../../src/store/store.js';
import { SIMULATION_SECRET } from './simulation.js';

export interface TestServer {
  app: FastifyInstance;
  config: Config;
  store: Store;
  baseUrl: string;
  close(): Promise<void>;
}

/** What the server was built with, for adapters that need it (metrics, the store's claimOnce). */
export interface CarrierDeps {
  logger: Logger;
  metrics: Metrics;
  store: Store;
}

export interface StartServerOptions {
  logger?: Logger;
  /** The carriers to serve instead of those the configuration enables. */
  carriers?: (config: Config, deps: CarrierDeps) => CarrierAdapter[];
  /** The list of carriers instead of src/carriers/registry.ts's: configured, served and placing calls. */
  carrierList?: readonly Carrier[];
  releaseRemotePrewarm?: NonNullable<AppDeps['standIns']>['releaseRemotePrewarm'];
  originator?: Originator;
  dialerOptions?: Partial<DialerOptions>;
  /** The simulated carrier API outbound calls go to when no carrier has credentials. */
  simulatedCarrierApiUrl?: string;
  /** Where the built console is; default: dist/console of this checkout. */
  consoleDir?: string;
  /** Post-call analysis over the server's own store, as main.ts builds it. */
  analysis?: (store: Store) => NonNullable<AppDeps['analysis']>;
  /** The fixed prompts, rendered as main.ts renders them; default: the bundled recordings. */
  prompts?: (config: Config) => NonNullable<AppDeps['prompts']>;
}

export async function startServer(
  env: Record<string, string>,
  opts: StartServerOptions = {},
): Promise<TestServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'callbridge-test-'));
  const config = loadConfig(
    {
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'silent',
      // The simulated carrier a test runs signs with keys derived from this secret (./simulation.ts).
      ...(opts.simulatedCarrierApiUrl ? { STREAM_TOKEN_SECRET: SIMULATION_SECRET } : {}),
      ...env,
    },
    {},
    opts.carrierList,
  );
  const logger = opts.logger ?? pino({ level: 'silent' });
  const metrics = createMetrics(config.region);
  const store = await openStore(config);
  const dial = createAgentDialer(
    {
      url: config.agent.url!,
      apiKey: config.agent.apiKey!,
      auth: config.agent.auth,
      speechApiUrl: config.agent.speechApiUrl,
      connectTimeoutMs: config.agent.connectTimeoutMs,
    },
    metrics,
  );
  const app = await buildApp(config, {
    logger,
    store,
    metrics,
    agent: { dial, mode: 'remote' },
    ...(opts.simulatedCarrierApiUrl
      ? {
          simulation: {
            carrierApi: opts.simulatedCarrierApiUrl,
            keys: simulationKeysFor(config.streamTokenSecret),
          },
        }
      : {}),
    ...(opts.analysis ? { analysis: opts.analysis(store) } : {}),
    ...(opts.prompts ? { prompts: opts.prompts(config) } : {}),
    standIns: {
      ...(opts.originator ? { originator: opts.originator } : {}),
      ...(opts.dialerOptions ? { dialerOptions: opts.dialerOptions } : {}),
      ...(opts.carriers ? { carriers: opts.carriers(config, { logger, metrics, store }) } : {}),
      ...(opts.carrierList ? { carrierList: opts.carrierList } : {}),
      ...(opts.releaseRemotePrewarm ? { releaseRemotePrewarm: opts.releaseRemotePrewarm } : {}),
      ...(opts.consoleDir ? { consoleDir: opts.consoleDir } : {}),
    },
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  // As main.ts does once listening: campaigns dial only where a carrier can place calls.
  app.callbridge.outbound.dialer?.start();
  const { port } = app.server.address() as { port: number };
  const baseUrl = `http://127.0.0.1:${port}`;
  // Media URLs in TwiML derive from PUBLIC_URL; the port is known only now.
  if (!env.PUBLIC_URL) config.publicUrl = baseUrl;
  return {
    app,
    config,
    store,
    baseUrl,
    close: async () => {
      await app.close();
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
