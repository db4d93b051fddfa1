// The recording room on the app, decorated as `app.recordings`: call recordings and the store every
// instance shares (docs/recordings.md), with its retention sweep running from the start and the
// store closed with the app.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Logger } from 'pino';
import { openRecordings } from './open-store.js';
import type { Recordings } from './recordings.js';

declare module 'fastify' {
  interface FastifyInstance {
    recordings: Recordings;
  }
}

async function recordingRoom(app: FastifyInstance, opts: { logger: Logger }): Promise<void> {
  const recordings = await openRecordings(app.config, app.metrics, opts.logger);
  recordings.startRetention();
  app.decorate('recordings', recordings);
  app.addHook('onClose', () => recordings.close());
}

export default fp(recordingRoom, {
  name: 'callbridge-recordings',
  decorators: { fastify: ['config'] },
  dependencies: ['callbridge-metrics'],
});
