// The metrics room on the app: the registry every room counts on, decorated as `app.metrics`
// (`GET /metrics` serves it: src/app/status.ts).
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Metrics } from './metrics.js';

declare module 'fastify' {
  interface FastifyInstance {
    metrics: Metrics;
  }
}

export interface MetricsPluginOptions {
  /** Made by the process, which counts on it before the app exists (the agent dialer). */
  metrics: Metrics;
}

async function metricsPlugin(app: FastifyInstance, opts: MetricsPluginOptions): Promise<void> {
  app.decorate('metrics', opts.metrics);
}

export default fp(metricsPlugin, { name: 'callbridge-metrics' });
