// The process: reads the environment, creates the logger, opens the store, starts the built-in
// agent when no agent host is configured, listens, and drains gracefully on SIGTERM.
import { hostname } from 'node:os';
import { join } from 'node:path';
import closeWithGrace from 'close-with-grace';
import { ensureAdminToken } from './admin/token-file.js';
import { createAgentDialer } from './agent/dialer.js';
import { carriersWithoutCredentials, unverifiedCarrierWarnings } from './carriers/index.js';
import { simulationKeysFor, simulationSigningEnv } from './carriers/simulation-keys.js';
import { buildApp } from './app.js';
import { SHUTDOWN_FAREWELL } from './call/session/session.js';
import { loadConfig } from './carriers/load-config.js';
import { claimPort, describeBindFailure, type PortClaim } from './port-claim.js';
import { createLogger } from './log.js';
import { createMetrics } from './metrics/metrics.js';
import { AnalysisService } from './speech/analysis.js';
import { warnUnknownThinkModels } from './speech/model-check.js';
import { agentRestBase } from './speech/models.js';
import { PromptAudio } from './speech/prompts.js';
import { openStore } from './store/index.js';
import { ensurePrivateTree } from './store/private-files.js';
import { DialPolicy, profileTargetsProblem } from './trust/dial-policy.js';

/** How long the goodbyes of calls still up at the drain deadline may take. */
const FAREWELL_WAIT_MS = 20_000;

let config: ReturnType<typeof loadConfig>;
try {
  config = loadConfig(process.env);
  const refusedTarget = profileTargetsProblem(config.profiles, new DialPolicy(config.dialPolicy));
  if (refusedTarget !== null) throw new Error(refusedTarget);
} catch (err) {
  // One line naming the variable or file and field: the whole message a misconfigured deploy needs.
  process.stderr.write(`callbridge: invalid configuration: ${(err as Error).message}\n`);
  process.exit(1);
}

// The port first: a process that cannot serve must not touch the DATA_DIR a running server uses.
let portClaim: PortClaim;
try {
  portClaim = await claimPort(config.port, config.host);
} catch (err) {
  const reason = describeBindFailure(err);
  if (reason === null) throw err;
  // One line, like a configuration error: the operator's fix is a setting, not a stack trace.
  process.stderr.write(`callbridge: cannot listen on ${config.host}:${config.port}: ${reason}\n`);
  process.exit(1);
}

const logger = createLogger(config.logLevel, undefined, { transcripts: config.logTranscripts });
try {
  // DATA_DIR holds transcripts, contacts and the admin token: 0700, its files 0600 (docs/security.md).
  const modes = ensurePrivateTree(config.dataDir);
  if (modes.tightened.length > 0) {
    logger.warn(
      { path: config.dataDir, tightened: modes.tightened.length, first: modes.tightened.slice(0, 5) },
      'DATA_DIR held files or folders other users could read: made private (folders 0700, files 0600)',
    );
  }
  if (modes.stillOpen.length > 0) {
    logger.warn(
      { path: config.dataDir, first: modes.stillOpen.slice(0, 5) },
      'DATA_DIR holds files other users can read that this user cannot change: chmod them 600',
    );
  }
} catch (err) {
  process.stderr.write(
    `callbridge: DATA_DIR ${config.dataDir} cannot be created: ${(err as Error).message}\n`,
  );
  process.exit(1);
}
if (config.adminToken === null) {
  try {
    const file = ensureAdminToken(config.dataDir);
    config = { ...config, adminToken: file.token };
    logger.info(
      { path: file.path },
      file.created
        ? 'ADMIN_TOKEN is not set: created an admin token in this file (the CLI reads it from there)'
        : 'ADMIN_TOKEN is not set: using the admin token in this file',
    );
    if (file.exposed)
      logger.warn({ path: file.path }, 'the admin token file is readable by other users: chmod 600 it');
  } catch (err) {
    process.stderr.write(`callbridge: invalid configuration: ${(err as Error).message}\n`);
    process.exit(1);
  }
}
const metrics = createMetrics(config.region);
const store = await openStore(config);

let agentUrl = config.agent.url;
let agentKey = config.agent.apiKey;
// The simulator (src/sim/) is loaded only when something here uses it: a configured deployment
// never reads it.
const localAgent =
  agentUrl === null
    ? await (
        await import('./sim/agent/server.js')
      ).startLocalAgent({ logger: logger.child({ component: 'local-agent' }), latencyReports: true })
    : null;
if (localAgent) {
  agentUrl = localAgent.url;
  agentKey = 'local';
  logger.info(
    { agentUrl },
    'no AGENT_URL configured: calls use the built-in local voice agent (set AGENT_URL and AGENT_API_KEY for a real one)',
  );
}

for (const warning of unverifiedCarrierWarnings(config)) logger.warn(warning);

// Carriers without any credentials place, answer and end their calls on the built-in simulated
// carrier API, so every carrier can be tried with no account. Never in production: there a missing
// key is a configuration error, not a reason to pretend. The simulation signs with keys of its own,
// made here, which the server trusts for those carriers only: it never holds an account's secret.
const carriersWithoutApi = carriersWithoutCredentials(config);
const simulationKeys =
  config.nodeEnv !== 'production' && carriersWithoutApi.length > 0
    ? simulationKeysFor(config.streamTokenSecret)
    : undefined;
// `SIM_CARRIER_API_URL` names one already running, so instances on one machine share one carrier
// that knows every call, as a real carrier does (an instance that dies leaves its calls there).
const sharedSimulatedApi = config.simulatedCarrierApiUrl;
const simulatedCarrierApi =
  simulationKeys !== undefined
    ? sharedSimulatedApi !== undefined
      ? { url: sharedSimulatedApi, close: async () => {} }
      : await startSimulatedCarrier(simulationKeys)
    : null;
if (simulatedCarrierApi) {
  logger.info(
    { simulatedCarrierApi: simulatedCarrierApi.url, carriers: carriersWithoutApi },
    'carriers without credentials use the built-in simulated carrier API',
  );
}

const dial = createAgentDialer(
  {
    url: agentUrl!,
    apiKey: agentKey!,
    auth: localAgent ? 'key' : config.agent.auth,
    speechApiUrl: localAgent ? localAgent.httpUrl : config.agent.speechApiUrl,
    connectTimeoutMs: config.agent.connectTimeoutMs,
  },
  metrics,
);
// The speech REST host for analysis and prompts: the built-in agent's own unless SPEECH_API_URL is set.
const speechApiUrl = localAgent
  ? (config.speech?.apiUrlOverride ?? localAgent.httpUrl)
  : config.agent.speechApiUrl;
const speechAuthorization = `Token ${agentKey!}`;
const analysis = config.speech?.analysis
  ? new AnalysisService({
      store,
      api: { baseUrl: speechApiUrl, authorization: speechAuthorization, timeoutMs: 30_000 },
      profileLanguage: (profile) => config.profiles[profile]?.language,
      metrics,
      logger: logger.child({ component: 'analysis' }),
      consumer: `${hostname()}:${process.pid}`,
    })
  : undefined;
const prompts = new PromptAudio({
  config: config.speech?.prompts ?? null,
  api: { baseUrl: speechApiUrl, authorization: speechAuthorization, timeoutMs: 5_000 },
  cacheDir: join(config.dataDir, 'prompts'),
  logger: logger.child({ component: 'prompts' }),
  metrics,
  // With the built-in agent and no rendering, a text prompt (a recording's consent, a voicemail) is
  // spoken by the agent's own voice rather than left silent.
  ...(localAgent ? { localVoice: (await import('./sim/speech/spoken-text.js')).speakText } : {}),
});

let app: Awaited<ReturnType<typeof buildApp>>;
try {
  app = await buildApp(config, {
    logger,
    store,
    metrics,
    agent: { dial, mode: localAgent ? 'local' : 'remote' },
    ...(simulatedCarrierApi && simulationKeys
      ? { simulation: { carrierApi: simulatedCarrierApi.url, keys: simulationKeys } }
      : {}),
    ...(analysis ? { analysis } : {}),
    prompts,
  });
} catch (err) {
  // A bad secrets file is configuration too: one line, before listening.
  if ((err as { code?: string }).code !== 'CALLBRIDGE_CONFIG_INVALID') throw err;
  process.stderr.write(`callbridge: invalid configuration: ${(err as Error).message}\n`);
  process.exit(1);
}
const { gateway } = app.callbridge;
process.on('SIGHUP', () => {
  logger.info('SIGHUP: reloading webhook secrets');
  void gateway.reload();
});

closeWithGrace(
  {
    delay: config.drainTimeoutMs + FAREWELL_WAIT_MS + 10_000,
    logger: { error: (m: string) => logger.error(m) },
    skip: ['SIGHUP'],
  },
  async ({ signal, err }) => {
    if (err) logger.error({ err }, 'shutting down after an unexpected error');
    const { registry, pending, fleet, outbound } = app.callbridge;
    app.callbridge.draining = true;
    // Peers learn at once that new calls go to them (docs/deploy.md); the dialer claims no more.
    const handedOver = Promise.all([
      fleet.drain().catch((err: Error) => logger.warn({ err: err.message }, 'could not announce the drain')),
      outbound.dialer?.drain(),
    ]);
    logger.info(
      {
        signal,
        liveCalls: registry.size,
        awaitedStreams: pending.size,
        drainTimeoutMs: config.drainTimeoutMs,
      },
      'draining',
    );
    // Live calls run to their end, and streams of webhooks answered here may still arrive (until
    // their token expires), up to the drain timeout; then calls still up are ended.
    const settled = async () => {
      while (registry.size > 0 || pending.size > 0) {
        await pending.whenNone();
        await registry.whenIdle();
      }
    };
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      settled(),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, config.drainTimeoutMs);
      }),
    ]);
    clearTimeout(timer);
    await handedOver;
    // Calls still up are ended politely: the agent says goodbye, heard before the hang-up.
    await Promise.race([
      Promise.all(registry.all().map((call) => call.finish('shutdown', SHUTDOWN_FAREWELL))),
      new Promise<void>((resolve) => setTimeout(resolve, FAREWELL_WAIT_MS).unref()),
    ]);
    for (const call of registry.all()) call.end('shutdown');
    await app.close();
    // Queued analyses stay in the store for the next start; one in flight is handed back.
    await analysis?.stop();
    await localAgent?.close();
    await simulatedCarrierApi?.close();
    await store.close();
    logger.info('stopped');
  },
);

// Loaded before listening: nothing may come between the server answering and its keys being written,
// or a client that saw it answer could look for keys not there yet.
const simulationKeysFile =
  simulatedCarrierApi && simulationKeys ? await import('./sim/carrier/simulation-keys-file.js') : null;
// The socket bound at the start is the one served: no other process can take the port meanwhile.
await app.listen(portClaim.listenOptions());
if (simulationKeysFile && simulationKeys) {
  // `callbridge call` on this machine signs with the simulation's keys, as the carrier would. Written
  // now the port is ours, under its number: another server on this DATA_DIR has a file of its own.
  simulationKeysFile.writeSimulationKeys(config.dataDir, portClaim.port, simulationKeys, carriersWithoutApi);
}
gateway.startDrainer();
if (analysis) {
  analysis.start();
  logger.info({ speechApiUrl }, `post-call analysis is on: transcripts go to ${speechApiUrl}/v1/read`);
}
if (config.speech?.prompts?.render === 'start') void prompts.warm();
// A warning, not a refusal: the agent host may be down right now (`callbridge doctor` fails on it).
void warnUnknownThinkModels(
  config.profiles,
  {
    baseUrl: localAgent ? localAgent.httpUrl : agentRestBase(agentUrl!),
    authorization: speechAuthorization,
    timeoutMs: 5_000,
  },
  logger,
);
app.callbridge.outbound.dialer?.start();

/** The built-in simulated carrier API, whose callees answer outbound calls as its number plan says. */
async function startSimulatedCarrier(keys: NonNullable<typeof simulationKeys>) {
  const [{ startSimulatedCarrierApi }, { simulatedCallee }, { TELNYX_SIM_PRIVATE_KEY_VARIABLE }] =
    await Promise.all([
      import('./sim/carrier-api/server.js'),
      import('./sim/callee/answer.js'),
      import('./sim/carrier/dialects/telnyx-webhooks.js'),
    ]);
  return startSimulatedCarrierApi({
    // Its callees answer outbound calls as the number plan says (src/sim/callee/plan.ts).
    onPlaced: simulatedCallee({
      timeScale: 1 / (config.simulatedCalleeSpeedup ?? 1),
      // Callbacks are signed with the simulation's own keys, which this server trusts for them.
      env: simulationSigningEnv(keys, carriersWithoutApi, TELNYX_SIM_PRIVATE_KEY_VARIABLE),
      onError: (message) => logger.warn({ component: 'simulated-carrier' }, message),
    }),
  });
}
