// buildApp assembles the HTTP and WebSocket surface from a validated config and its dependencies:
// a list of plugins, one per room, each declaring the decorators and plugins it needs (fastify-plugin
// checks them as it registers). It never listens, reads the environment or exits: src/main.ts does.
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import type { Logger } from 'pino';
import adminRoom from './admin/mount.js';
import { registerOpenApi } from './admin/openapi.js';
import type { AgentDialer } from './agent/dialer.js';
import carrierCalls from './app/carrier-calls.js';
import carriers, { type Simulation } from './app/carriers.js';
import endedCalls, { type Analysis } from './app/ended-calls.js';
import ground from './app/ground.js';
import httpAnswers from './app/http.js';
import state from './app/state.js';
import status from './app/status.js';
import type { CarrierAdapter } from './call/carrier-port.js';
import type { Carrier } from './carriers/carrier.js';
import type { ForeignStream } from './call/stream/media-socket.js';
import callRoom from './call/plugin.js';
import { MAX_TOKEN_CHARS } from './call/intake/stream-token.js';
import type { Config } from './config/types.js';
import fleetRoom from './fleet/plugin.js';
import { clientErrorHandler, frameworkErrorHandler } from './http-errors.js';
import type { Metrics } from './metrics/metrics.js';
import metricsRoom from './metrics/plugin.js';
import type { DialerOptions } from './outbound/dialer.js';
import outboundRoom from './outbound/plugin.js';
import type { Originator } from './outbound/ports.js';
import recordingRoom from './recording/plugin.js';
import type { PromptAudio } from './speech/prompts.js';
import type { Store } from './store/store.js';
import trustRoom from './trust/plugin.js';
import webhooksRoom from './webhooks/plugin.js';

export type { CallbridgeState } from './app/state.js';

export interface AppDeps {
  logger: Logger;
  store: Store;
  metrics: Metrics;
  /** The voice agent: how a call dials it, and whether it is the built-in one (shown by `GET /`). */
  agent: { dial: AgentDialer; mode: 'remote' | 'local' };
  /** Post-call analysis (ANALYSIS=on): each saved record is handed to it; each outcome is announced. */
  analysis?: Analysis;
  /** The fixed prompts a caller hears without an agent; default: the bundled recordings. */
  prompts?: PromptAudio;
  /** The built-in simulated carrier, outside production when a carrier has no credentials. */
  simulation?: Simulation;
  /** What tests put in place of what the configuration builds. */
  standIns?: {
    /** Served instead of the carriers the configuration enables. */
    carriers?: readonly CarrierAdapter[];
    /** The list of carriers instead of src/carriers/registry.ts's: configured, served and placing calls. */
    carrierList?: readonly Carrier[];
    /** Places the dialer's calls instead of the carriers' placers. */
    originator?: Originator;
    dialerOptions?: Partial<DialerOptions>;
    /** Closes an agent pre-warmed on another instance; default: the fleet's relay. */
    releaseRemotePrewarm?: (stream: ForeignStream) => void;
    /** Where the built console is; default: dist/console of this checkout. */
    consoleDir?: string;
  };
}

const QUIET_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

export async function buildApp(config: Config, deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    trustProxy: config.trustProxy === false ? false : config.trustProxy,
    // Probes and scrapes arrive every few seconds; logging each would drown the call logs.
    logController: new LogController({ disableRequestLogging: (req) => QUIET_PATHS.has(req.url ?? '') }),
    // Slow-loris defence: a connection that sends nothing for 10 s is closed, and a request must be
    // complete within 30 s. Upgraded media sockets are exempt (ws clears the socket timeout) and
    // are watched by pings instead.
    connectionTimeout: 10_000,
    requestTimeout: 30_000,
    // Media URLs carry the stream token as a path segment.
    routerOptions: { maxParamLength: MAX_TOKEN_CHARS },
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler,
    // A request that reaches the instance as it closes, on a keep-alive connection a balancer
    // already holds, is served rather than answered 503: a carrier does not send a status callback
    // again, and the stores stay open until every connection has ended (docs/deploy.md).
    return503OnClosing: false,
  });
  const { logger, standIns = {} } = deps;

  await app.register(ground, { config, store: deps.store });
  await app.register(httpAnswers);
  // Before any route: the OpenAPI document is generated from every route registered after it.
  await registerOpenApi(app);
  await app.register(metricsRoom, { metrics: deps.metrics });
  await app.register(trustRoom);
  // Before any other route: the media WebSocket server serves upgrades of the routes after it.
  await app.register(callRoom, { logger, dial: deps.agent.dial, ...opt('prompts', deps.prompts) });
  // A bad secrets file stops the app here, before a store or a peer connection has been opened.
  await app.register(webhooksRoom, { logger });
  await app.register(recordingRoom, { logger });
  await app.register(fleetRoom, { logger });
  await app.register(carriers, {
    logger,
    ...opt('simulation', deps.simulation),
    ...opt('carriers', standIns.carriers),
    ...opt('carrierList', standIns.carrierList),
  });
  await app.register(endedCalls, { logger, ...opt('analysis', deps.analysis) });
  await app.register(outboundRoom, {
    logger,
    placers: app.placers,
    carriers: app.carriers.map((carrier) => carrier.name),
    ...opt('originator', standIns.originator),
    ...opt('dialerOptions', standIns.dialerOptions),
  });
  await app.register(carrierCalls, { logger, ...opt('releaseRemotePrewarm', standIns.releaseRemotePrewarm) });
  await app.register(status, {
    agentMode: deps.agent.mode,
    analysis: deps.analysis !== undefined,
    ...opt('simulation', deps.simulation),
  });
  await app.register(adminRoom, opt('consoleDir', standIns.consoleDir));
  await app.register(state);
  return app;
}

/** `{[key]: value}` when the value is given, else nothing (optional properties stay absent). */
function opt<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}
