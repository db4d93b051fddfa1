// What the app says of itself: `GET /` (its region, instance, agent, carriers and their media paths,
// the simulated carrier in development, live calls, the webhook gateway, analysis), `GET /healthz`
// (the process answers), `GET /readyz` (it takes new calls: 503 while it drains) and `GET /metrics`
// (every metric, for Prometheus).
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { mediaPath } from '../call/intake/media-url.js';
import { carriersWithoutCredentials } from '../carriers/index.js';
import { describeSimulation } from '../carriers/simulation-keys.js';
import type { Simulation } from './carriers.js';

export interface StatusOptions {
  /** Where calls' agents live (`local` for the built-in agent). */
  agentMode: 'remote' | 'local';
  /** The simulated carrier: its API, so `callbridge call` finds it, and its keys' id (no key). */
  simulation?: Simulation;
  analysis: boolean;
}

async function status(app: FastifyInstance, opts: StatusOptions): Promise<void> {
  const { config, carriers, calls, gateway, metrics } = app;
  app.get('/', async () => ({
    name: 'callbridge',
    region: config.region,
    instance: config.instanceId,
    agent: opts.agentMode,
    carriers: carriers.map((carrier) => carrier.name),
    media: Object.fromEntries(carriers.map((carrier) => [carrier.name, mediaPath(carrier.name)])),
    ...(opts.simulation
      ? {
          simulatedCarrierApi: opts.simulation.carrierApi,
          simulation: describeSimulation(opts.simulation.keys, carriersWithoutCredentials(config)),
        }
      : {}),
    calls: { active: calls.registry.size },
    webhooks: await gateway.info(),
    analysis: opts.analysis ? 'on' : 'off',
  }));
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_req, reply) =>
    calls.draining ? reply.code(503).send({ status: 'draining' }) : { status: 'ready' },
  );
  app.get('/metrics', async (_req, reply) =>
    reply.header('content-type', metrics.registry.contentType).send(await metrics.registry.metrics()),
  );
}

export default fp(status, {
  name: 'callbridge-status',
  decorators: { fastify: ['config', 'carriers', 'gateway'] },
  dependencies: ['callbridge-metrics', 'callbridge-calls'],
});
