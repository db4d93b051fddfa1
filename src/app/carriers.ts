// The carriers this app serves and those that place its outbound calls, as the configuration
// enables them (src/carriers/index.ts), decorated as `app.carriers` and `app.placers`.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Logger } from 'pino';
import type { CarrierAdapter } from '../call/carrier-port.js';
import { buildCallPlacers, buildCarrierAdapters } from '../carriers/index.js';
import type { Carrier } from '../carriers/carrier.js';
import type { SimulationKeys } from '../carriers/simulation-keys.js';
import type { CallPlacer } from '../outbound/ports.js';

declare module 'fastify' {
  interface FastifyInstance {
    carriers: readonly CarrierAdapter[];
    placers: readonly CallPlacer[];
  }
}

/** The built-in simulated carrier (development): where carriers without credentials place calls. */
export interface Simulation {
  /** Its API (src/sim/carrier-api/), listed by `GET /` so `callbridge call` finds it. */
  carrierApi: string;
  /** Its own signing keys, trusted only for carriers without credentials. */
  keys: SimulationKeys;
}

export interface CarriersOptions {
  logger: Logger;
  simulation?: Simulation;
  /** Served instead of those the configuration enables (tests). */
  carriers?: readonly CarrierAdapter[];
  /** The list of carriers instead of src/carriers/registry.ts's (tests). */
  carrierList?: readonly Carrier[];
}

async function carriers(app: FastifyInstance, opts: CarriersOptions): Promise<void> {
  const { config, store, metrics } = app;
  const simulated = opts.simulation?.carrierApi;
  const placers = buildCallPlacers(config, { simulatedApiUrl: simulated ?? null }, opts.carrierList);
  app.decorate('placers', placers);
  app.decorate(
    'carriers',
    opts.carriers ??
      buildCarrierAdapters(
        config,
        {
          logger: opts.logger,
          metrics,
          claimOnce: (key, ttlMs) => store.claimOnce(key, ttlMs),
          ...(simulated !== undefined ? { simulatedApiUrl: simulated } : {}),
          ...(opts.simulation ? { simulationKeys: opts.simulation.keys } : {}),
          placers,
        },
        opts.carrierList,
      ),
  );
}

export default fp(carriers, {
  name: 'callbridge-carriers',
  decorators: { fastify: ['config', 'store'] },
  dependencies: ['callbridge-metrics'],
});
