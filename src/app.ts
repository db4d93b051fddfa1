// buildApp assembles the HTTP and WebSocket surface from a validated config and its dependencies.
// It never listens, reads the environment or exits: src/main.ts does that.
import { hostname } from 'node:os';
import { join } from 'node:path';
import websocket from '@fastify/websocket';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  LogController,
} from 'fastify';
import type { Logger } from 'pino';
import { registerCallAdminRoutes } from './admin/calls.js';
import { registerCampaignAdminRoutes } from './admin/campaigns.js';
import { registerDncAdminRoutes } from './admin/dnc.js';
import { registerLiveCallAdminRoutes } from './admin/live-calls.js';
import { registerRecordingAdminRoutes } from './admin/recordings.js';
import { registerListenRoutes } from './admin/listen.js';
import { registerLiveEventRoutes } from './admin/live-events.js';
import { registerAuditRoutes } from './admin/audit.js';
import { consoleFiles } from './admin/console-files.js';
import { registerKeyAdminRoutes } from './admin/keys.js';
import { registerOpenApi } from './admin/openapi.js';
import { adminApi } from './admin/plugin.js';
import type { DeclaredRoute } from './admin/roles.js';
import { registerSessionRoutes } from './admin/session.js';
import type { AgentDialer } from './agent/dialer.js';
import { AdmissionControl } from './call/admission.js';
import type { CarrierAdapter } from './call/carrier-port.js';
import { carrierRoutes } from './call/carrier-routes.js';
import { CallEventHub } from './call/events.js';
import { admitNewCall, createCallIntake } from './call/intake.js';
import { startPingSweep } from './call/liveness.js';
import type { ForeignStream, MediaSocketDeps } from './call/media-socket.js';
import { mediaPath } from './call/media-url.js';
import { observerRoutes } from './call/observer.js';
import { PendingStreams } from './call/pending-streams.js';
import { promptRoutes } from './call/prompt-routes.js';
import { type PrewarmedAgent, PrewarmPool } from './call/prewarm.js';
import type { CallRecord } from './store/call-record.js';
import { CallRegistry } from './call/registry.js';
import { MAX_TOKEN_CHARS } from './call/stream-token.js';
import { VoicemailRecordings } from './call/voicemail-recordings.js';
import { registerPlaceCallRoutes } from './admin/place-call.js';
import { MachineVerdicts } from './call/machine-verdicts.js';
import { buildCallPlacers, buildCarrierAdapters } from './carriers/index.js';
import type { CallPlacer } from './carriers/placer.js';
import { composeOriginator } from './originator.js';
import { DialPolicy } from './trust/dial-policy.js';
import { FetchPolicy } from './trust/fetch-policy.js';
import { OutboundReports } from './outbound-reports.js';
import type { Config } from './config/types.js';
import { type Fleet, startFleet } from './fleet/index.js';
import { AGENT_REFUSED_CODE, AgentConnectError, codeForStatus, NotFoundError } from './errors.js';
import { clientErrorHandler, frameworkErrorHandler } from './http-errors.js';
import { createMetrics, type Metrics } from './metrics/metrics.js';
import type { AnalysisSubject } from './speech/analysis.js';
import { PromptAudio } from './speech/prompts.js';
import type { DialerClock } from './outbound/clock.js';
import type { DialerOptions } from './outbound/dialer.js';
import { dialerOptionsOf } from './outbound/dialer-context.js';
import { createOutbound, type Originator, type Outbound } from './outbound/index.js';
import type { SimulationKeys } from './carriers/simulation-keys.js';
import type { Store } from './store/store.js';
import { outboundContexts } from './call/outbound-context.js';
import { openRecordings } from './recording/open-store.js';
import type { Recordings } from './recording/recordings.js';
import {
  ANALYSIS_EVENT_PROVIDER,
  analysisAnnouncer,
  callEndedEvent,
  callEventAnnouncer,
  recordingReadyEvent,
} from './webhooks/call-events.js';
import { operatorGatewayNotifier } from './webhooks/notifier.js';
import { registerWebhookAdminRoutes, type WebhookGateway, webhookGateway } from './webhooks/plugin.js';

export interface AppDeps {
  logger: Logger;
  store: Store;
  dial: AgentDialer;
  metrics?: Metrics;
  /** Shown by `GET /`: where calls' agents live (`local` for the built-in agent). */
  agentMode: 'remote' | 'local';
  /** Post-call analysis (ANALYSIS=on): each saved record is handed to it; each outcome is announced. */
  analysis?: {
    enqueue(record: AnalysisSubject): Promise<void>;
    onAnalysed?(listener: (record: CallRecord) => void): void;
  };
  /** The fixed prompts a caller hears without an agent (src/speech/prompts.ts). */
  prompts?: PromptAudio;
  /** Places outbound calls for campaigns; absent: campaigns can be prepared but not started. */
  originator?: Originator;
  /** The dialer's clock and tuning (tests). */
  dialerClock?: DialerClock;
  dialerOptions?: Partial<DialerOptions>;
  /** The carriers served; default: those the configuration enables (src/carriers/index.ts). */
  carriers?: readonly CarrierAdapter[];
  /** The carriers that place outbound calls; default: those with credentials (src/carriers/index.ts). */
  placers?: readonly CallPlacer[];
  /**
   * The built-in simulated carrier API (src/sim/carrier-api/): carriers without credentials place,
   * answer and end calls there. Listed by `GET /` so `callbridge call` finds it.
   */
  simulatedCarrierApi?: string;
  /** The simulated carrier's own signing keys, trusted only for carriers without credentials. */
  simulationKeys?: SimulationKeys;
  /**
   * Tells the instance that prepared a call, whose stream arrived here instead, to close the agent
   * it pre-warmed for it. Default: nothing (one instance; the agent there expires after its TTL).
   */
  releaseRemotePrewarm?: (stream: ForeignStream) => void;
  /** Call recordings and their store; default: the store `RECORDING_STORE` names. */
  recordings?: Recordings;
  /** Where the built console is (tests); default: dist/console of this checkout. */
  consoleDir?: string;
}

export interface CallbridgeState {
  config: Config;
  metrics: Metrics;
  registry: CallRegistry;
  events: CallEventHub;
  gateway: WebhookGateway;
  prewarm: PrewarmPool<PrewarmedAgent>;
  /** Calls prepared here whose stream has not arrived: a drain waits for them too. */
  pending: PendingStreams;
  admission: AdmissionControl;
  /** What the instances of a deployment share: live calls, relays (one instance: its own). */
  fleet: Fleet;
  /** Campaigns and their dialer (main.ts starts the dialer once listening). */
  outbound: Outbound;
  draining: boolean;
  /** The fixed prompts and campaign voicemails as audio (`promptAudio(kind, format, {text})`). */
  prompts: PromptAudio;
  /** Call recordings and the store every instance shares (docs/recordings.md). */
  recordings: Recordings;
  /** Every /v1 route with the role it declares (src/admin/roles.ts). */
  adminRoutes: DeclaredRoute[];
}

declare module 'fastify' {
  interface FastifyInstance {
    callbridge: CallbridgeState;
  }
}

/** Largest WebSocket message accepted from a carrier; media frames are a few hundred bytes. */
const MAX_MEDIA_FRAME_BYTES = 64 * 1024;
const QUIET_PATHS = new Set(['/healthz', '/readyz', '/metrics']);
const ADMISSION_RECOVER_EVERY_MS = 2_000;

export async function buildApp(config: Config, deps: AppDeps): Promise<FastifyInstance> {
  const metrics = deps.metrics ?? createMetrics(config.region);
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

  const gateway = webhookGateway({ config, store: deps.store, metrics, logger: deps.logger });
  // One dial policy for every number that leaves the server (docs/security.md).
  const dialPolicy = new DialPolicy(config.dialPolicy);
  const fetchPolicy = new FetchPolicy(config.fetchPolicy);
  const placers =
    deps.placers ?? buildCallPlacers(config, { simulatedApiUrl: deps.simulatedCarrierApi ?? null });
  const carriers =
    deps.carriers ??
    buildCarrierAdapters(config, {
      logger: deps.logger,
      metrics,
      claimOnce: (key, ttlMs) => deps.store.claimOnce(key, ttlMs),
      ...(deps.simulatedCarrierApi !== undefined ? { simulatedApiUrl: deps.simulatedCarrierApi } : {}),
      ...(deps.simulationKeys ? { simulationKeys: deps.simulationKeys } : {}),
      placers,
    });
  // Outbound contexts stay in the shared store; carriers carry only their references (docs/security.md).
  const contexts = outboundContexts(config.streamTokenSecret, deps.store);
  const outboundCalls = placers.length > 0 ? composeOriginator(placers, contexts, dialPolicy) : null;
  const outbound = createOutbound({
    config,
    store: deps.store,
    metrics,
    logger: deps.logger,
    originator: deps.originator ?? outboundCalls?.originator ?? null,
    carriers: outboundCalls?.carriers ?? carriers.map((carrier) => carrier.name),
    carriersWithoutMachineDetection: outboundCalls?.carriersWithoutMachineDetection ?? [],
    // Campaign events reach the operator gateway like webhook events: same body, headers, signature.
    deliver: operatorGatewayNotifier('campaigns', {
      url: config.webhooks.operatorGatewayUrl,
      secret: config.webhooks.operatorGatewaySecret ?? null,
      timeoutMs: 10_000,
      logger: deps.logger,
      now: Date.now,
    }),
    instanceId: hostname(),
    ...(deps.dialerClock ? { clock: deps.dialerClock } : {}),
    dialerOptions: { ...dialerOptionsOf(config.dialer), ...deps.dialerOptions },
    dialPolicy,
  });
  // Call events (analysed, ended, recording ready) reach the operator gateway like campaign events:
  // same body and signature.
  const callsGateway = operatorGatewayNotifier(ANALYSIS_EVENT_PROVIDER, {
    url: config.webhooks.operatorGatewayUrl,
    secret: config.webhooks.operatorGatewaySecret ?? null,
    timeoutMs: 10_000,
    logger: deps.logger,
    now: Date.now,
  });
  deps.analysis?.onAnalysed?.(analysisAnnouncer(callsGateway, deps.logger));
  const announceCall = callEventAnnouncer(callsGateway, deps.logger);
  const recordings = deps.recordings ?? (await openRecordings(config, metrics, deps.logger));
  recordings.startRetention();
  const live = {
    registry: new CallRegistry(),
    events: new CallEventHub(),
    prewarm: new PrewarmPool<PrewarmedAgent>({
      onExpired: () => metrics.prewarm.inc({ outcome: 'expired' }),
      onReplaced: () => metrics.prewarm.inc({ outcome: 'replaced' }),
    }),
    pending: new PendingStreams(),
  };
  const fleet = await startFleet({
    config,
    ...live,
    metrics,
    logger: deps.logger,
    recording: (callSid, action) => recordings.control(callSid, action),
  });
  const state: CallbridgeState = {
    config,
    metrics,
    ...live,
    gateway,
    admission: new AdmissionControl({
      maxCalls: config.maxCalls,
      recoverEveryMs: ADMISSION_RECOVER_EVERY_MS,
      onChange: (limit) => metrics.admissionLimit.set(limit),
    }),
    outbound,
    fleet,
    draining: false,
    adminRoutes: [],
    // Without a configured renderer the bundled recordings play.
    prompts:
      deps.prompts ??
      new PromptAudio({ config: null, api: null, cacheDir: '', logger: deps.logger, metrics }),
    recordings,
  };
  metrics.admissionLimit.set(config.maxCalls);
  // Every agent 429, whoever dialed, is counted and lowers the admitted concurrency for a while.
  const dial: AgentDialer = async (settings, logger) => {
    try {
      return await deps.dial(settings, logger);
    } catch (err) {
      if (err instanceof AgentConnectError && err.code === AGENT_REFUSED_CODE) {
        metrics.agentRefused.inc();
        state.admission.refused(state.registry.size);
      }
      throw err;
    }
  };
  app.decorate('callbridge', state);

  app.setErrorHandler((err: FastifyError, req, reply) => {
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 600 ? err.statusCode : 500;
    const ours = typeof err.code === 'string' && err.code.startsWith('CALLBRIDGE_');
    if (status >= 500) req.log.error({ err }, 'request failed');
    // No stack, and no internal message, ever leaves the process.
    const message = status >= 500 && !ours ? 'internal error' : err.message;
    return reply.code(status).send({ error: { code: ours ? err.code : codeForStatus(status), message } });
  });
  app.setNotFoundHandler((req) => {
    throw new NotFoundError(`no route for ${req.method} ${req.url.split('?')[0]}`);
  });

  // Before any route: the OpenAPI document is generated from every route registered after it.
  await registerOpenApi(app);
  await app.register(websocket, {
    options: { maxPayload: MAX_MEDIA_FRAME_BYTES },
    errorHandler: (err, socket, req) => {
      // A peer breaking the WebSocket protocol (frame over maxPayload, text not UTF-8) is its fault:
      // `ws` has already sent the fitting close code (RFC 6455 section 7.4.1); let that close finish.
      const { code } = err as NodeJS.ErrnoException;
      if (typeof code === 'string' && code.startsWith('WS_ERR_')) {
        req.log.warn({ err: err.message }, 'carrier socket broke the WebSocket protocol');
        return;
      }
      req.log.error({ err }, 'carrier socket failed');
      socket.terminate();
    },
  });
  // Slow-loris defence for upgrades too: request headers must arrive promptly.
  app.server.headersTimeout = 10_000;
  const pinger = startPingSweep(app, config.carrierPingIntervalMs);

  app.get('/', async () => ({
    name: 'callbridge',
    region: config.region,
    instance: config.instanceId,
    agent: deps.agentMode,
    carriers: carriers.map((carrier) => carrier.name),
    media: Object.fromEntries(carriers.map((carrier) => [carrier.name, mediaPath(carrier.name)])),
    ...(deps.simulatedCarrierApi !== undefined ? { simulatedCarrierApi: deps.simulatedCarrierApi } : {}),
    calls: { active: state.registry.size },
    webhooks: await gateway.info(),
    analysis: deps.analysis ? 'on' : 'off',
  }));
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_req, reply) =>
    state.draining ? reply.code(503).send({ status: 'draining' }) : { status: 'ready' },
  );
  app.get('/metrics', async (_req, reply) =>
    reply.header('content-type', metrics.registry.contentType).send(await metrics.registry.metrics()),
  );

  const isDraining = () => state.draining;
  const verdicts = new MachineVerdicts(state.registry);
  /** The record with its recording, once the store has it whole (recorded calls only). */
  const withRecording = async (record: CallRecord): Promise<CallRecord> => {
    const summary = await recordings.completeCall(record.callSid);
    if (summary === null) return record;
    // A recording deleted during its call stays deleted: no `recording.ready` for it.
    const state = summary.state === 'ready' || summary.state === 'deleted' ? summary.state : 'failed';
    if (state === 'ready') announceCall(recordingReadyEvent(record.callSid, summary, Date.now()));
    const { durationMs, bytes, pauses } = summary;
    return { ...record, recording: { state, durationMs, bytes, pauses } };
  };
  const saveRecord = (record: CallRecord) => {
    announceCall(callEndedEvent(record));
    void withRecording(record).then((complete) =>
      deps.store.saveCallRecord(complete).then(
        // Queued, not awaited by the call: analysis never delays a call's end.
        () => (complete.carrierStatus === undefined ? deps.analysis?.enqueue(complete) : undefined),
        (err: Error) => {
          deps.logger.error({ err: err.message, callSid: record.callSid }, 'could not save the call record');
        },
      ),
    );
  };
  const outboundReports = new OutboundReports({
    dialer: () => outbound.dialer,
    saveRecord,
    isLive: (callSid) => state.registry.has(callSid),
    logger: deps.logger.child({ component: 'outbound' }),
  });
  const { prompts } = state;
  // Fetched once per URL, kept beside the rendered prompts.
  const voicemailRecordings = new VoicemailRecordings({
    cacheDir: join(config.dataDir, 'voicemails'),
    fetchPolicy,
  });
  const intake = createCallIntake({
    claimOnce: (key, validForMs) => deps.store.claimOnce(key, validForMs),
    contexts,
    config,
    dial,
    metrics,
    logger: deps.logger,
    registry: state.registry,
    prewarm: state.prewarm,
    admission: state.admission,
    isDraining,
    verdicts,
    onOutboundStatus: (report) => outboundReports.carrierStatus(report),
    onOutboundCallIdentified: (attemptId, carrier, callSid) =>
      outboundReports.callIdentified(attemptId, carrier, callSid),
    pending: state.pending,
    storeReachable: fleet.storeReachable,
    readyPeer: fleet.readyPeer,
  });
  const media: MediaSocketDeps = {
    config,
    store: deps.store,
    dial,
    metrics,
    logger: deps.logger,
    registry: state.registry,
    events: state.events,
    prewarm: state.prewarm,
    verdicts,
    admitCall: () =>
      admitNewCall({
        registry: state.registry,
        prewarm: state.prewarm,
        admission: state.admission,
        isDraining,
        storeReachable: fleet.storeReachable,
      }),
    releaseRemotePrewarm: deps.releaseRemotePrewarm ?? fleet.releaseRemotePrewarm,
    pending: state.pending,
    prompts: (kind, format, opts) => prompts.promptAudio(kind, format, opts),
    voicemailRecordings: (url, format) => voicemailRecordings.get(url, format),
    dialPolicy,
    recordCall: (call) => recordings.recordCall(call),
    saveRecord: (record: CallRecord) => {
      saveRecord(record);
      outboundReports.callRecorded(record);
    },
  };
  await app.register(carrierRoutes(carriers, intake, media));
  await app.register(promptRoutes((kind, format) => prompts.promptAudio(kind, format)));
  await app.register(
    observerRoutes({
      secret: config.streamTokenSecret,
      adminToken: config.adminToken,
      events: fleet.feed,
      standing: async (callSid, carrier) => {
        const live = await fleet.calls.list();
        if (live.some((call) => call.callSid === callSid && (carrier === null || call.carrier === carrier)))
          return 'live';
        const record = await deps.store.getCallRecord(callSid);
        return record !== null && (carrier === null || record.carrier === carrier) ? 'ended' : 'unknown';
      },
      waitForCallMs: config.streamTokenTtlMs,
    }),
  );
  await app.register(gateway.plugin);
  await app.register(consoleFiles(deps.consoleDir, metrics));
  if (config.adminToken) {
    await app.register(
      adminApi(
        { adminToken: config.adminToken, store: deps.store, now: Date.now, catalogue: state.adminRoutes },
        [
          (scope) =>
            registerSessionRoutes(scope, {
              store: deps.store,
              adminToken: config.adminToken!,
              now: Date.now,
            }),
          (scope) => registerKeyAdminRoutes(scope, { store: deps.store, now: Date.now }),
          (scope) => registerAuditRoutes(scope, { store: deps.store }),
          (scope) => registerWebhookAdminRoutes(scope, { store: deps.store }),
          (scope) => registerCallAdminRoutes(scope, { store: deps.store, live: fleet.calls }),
          (scope) => registerLiveCallAdminRoutes(scope, { calls: fleet.calls, dialPolicy }),
          (scope) =>
            registerRecordingAdminRoutes(scope, {
              recordings: recordings.store,
              calls: fleet.calls,
              records: deps.store,
            }),
          (scope) => registerListenRoutes(scope, { listening: fleet.listening }),
          (scope) =>
            registerLiveEventRoutes(scope, {
              live: fleet.live,
              feed: fleet.feed,
              campaigns: outbound.service,
              store: deps.store,
              now: Date.now,
            }),
          (scope) =>
            registerPlaceCallRoutes(scope, {
              profiles: config.profiles,
              defaultProfile: config.numbers.default,
              carriers: outboundCalls?.carriers ?? [],
              admit: (carrier) => intake.admit(carrier),
              dialPolicy,
              fetchPolicy,
              isDoNotCall: async (number) => (await deps.store.getDoNotCall(number)) !== null,
              place: (call) =>
                outboundCalls!.place({ ...call, attemptId: null, campaignId: null, contact: null }),
            }),
          (scope) => registerCampaignAdminRoutes(scope, { campaigns: outbound.service }),
          (scope) => registerDncAdminRoutes(scope, { store: deps.store, now: Date.now }),
        ],
      ),
      { prefix: '/v1' },
    );
  }
  app.addHook('onClose', async () => {
    await outbound.dialer?.stop();
    outboundReports.close();
    clearInterval(pinger);
    state.prewarm.closeAll();
    state.pending.clear();
    await fleet.close();
    await gateway.close();
    await recordings.close();
  });

  return app;
}
