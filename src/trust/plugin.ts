// The trust room on the app: the dial policy and the fetch policy, each built once from the
// configuration and decorated as `app.policies` (docs/security.md). Every room that checks a number
// or a URL an API caller supplied takes them from here, so none falls back to defaults of its own.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { DialPolicy } from './dial-policy.js';
import { FetchPolicy } from './fetch-policy.js';

export interface Policies {
  /** For every number that leaves the server. */
  dial: DialPolicy;
  /** For every URL an API caller supplies that the server fetches. */
  fetch: FetchPolicy;
}

declare module 'fastify' {
  interface FastifyInstance {
    policies: Policies;
  }
}

async function trustPlugin(app: FastifyInstance): Promise<void> {
  const { config } = app;
  app.decorate('policies', {
    dial: new DialPolicy(config.dialPolicy),
    fetch: new FetchPolicy(config.fetchPolicy),
  });
}

export default fp(trustPlugin, { name: 'callbridge-trust', decorators: { fastify: ['config'] } });
