// The fleet room on the app, decorated as `app.fleet`: what the instances of a deployment share
// about the calls of the call room (live calls, relays, instance routing), started once those calls
// have a home and closed with the app.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Logger } from 'pino';
import { type Fleet, startFleet } from './index.js';

declare module 'fastify' {
  interface FastifyInstance {
    fleet: Fleet;
  }
}

async function fleetRoom(app: FastifyInstance, opts: { logger: Logger }): Promise<void> {
  const { registry, events, prewarm, pending } = app.calls;
  const { recordings } = app;
  const fleet = await startFleet({
    config: app.config,
    registry,
    events,
    prewarm,
    pending,
    metrics: app.metrics,
    logger: opts.logger,
    recording: (callSid, action) => recordings.control(callSid, action),
  });
  app.decorate('fleet', fleet);
  app.addHook('onClose', () => fleet.close());
}

export default fp(fleetRoom, {
  name: 'callbridge-fleet',
  decorators: { fastify: ['config'] },
  dependencies: ['callbridge-metrics', 'callbridge-calls', 'callbridge-recordings'],
});
