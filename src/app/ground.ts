// What the app is built from, decorated first so every room can declare that it needs it: the
// validated configuration (`app.config`) and the shared store (`app.store`).
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../config/types.js';
import type { Store } from '../store/store.js';

declare module 'fastify' {
  interface FastifyInstance {
    config: Config;
    store: Store;
  }
}

export interface Ground {
  config: Config;
  store: Store;
}

async function ground(app: FastifyInstance, opts: Ground): Promise<void> {
  app.decorate('config', opts.config);
  app.decorate('store', opts.store);
}

export default fp(ground, { name: 'callbridge-ground' });
