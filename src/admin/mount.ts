// The admin room on the app: the console's files, and the `/v1` API (docs/console.md) with every
// route registered as before, fed by the rooms it administers. With no ADMIN_TOKEN the API is not
// mounted. Every /v1 route and the role it declares is listed in `app.adminRoutes` (roles.ts).
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { registerWebhookAdminRoutes } from '../webhooks/plugin.js';
import { registerAuditRoutes } from './audit.js';
import { registerCallAdminRoutes } from './calls.js';
import { registerCampaignAdminRoutes } from './campaigns.js';
import { consoleFiles } from './console-files.js';
import { registerDncAdminRoutes } from './dnc.js';
import { registerKeyAdminRoutes } from './keys.js';
import { registerListenRoutes } from './listen.js';
import { registerLiveCallAdminRoutes } from './live-calls.js';
import { registerLiveEventRoutes } from './live-events.js';
import { registerPlaceCallRoutes } from './place-call.js';
import { adminApi } from './plugin.js';
import { registerRecordingAdminRoutes } from './recordings.js';
import type { DeclaredRoute } from './roles.js';
import { registerSessionRoutes } from './session.js';

declare module 'fastify' {
  interface FastifyInstance {
    adminRoutes: DeclaredRoute[];
  }
}

export interface AdminRoomOptions {
  /** Where the built console is (tests); default: dist/console of this checkout. */
  consoleDir?: string;
}

async function adminRoom(app: FastifyInstance, opts: AdminRoomOptions): Promise<void> {
  const { config, store, fleet, outbound, recordings, policies, intake } = app;
  const adminRoutes: DeclaredRoute[] = [];
  app.decorate('adminRoutes', adminRoutes);
  await app.register(consoleFiles(opts.consoleDir, app.metrics));
  const adminToken = config.adminToken;
  if (!adminToken) return;
  const placing = outbound.calls;
  await app.register(
    adminApi({ adminToken, store, now: Date.now, catalogue: adminRoutes }, [
      (scope) => registerSessionRoutes(scope, { store, adminToken, now: Date.now }),
      (scope) => registerKeyAdminRoutes(scope, { store, now: Date.now }),
      (scope) => registerAuditRoutes(scope, { store }),
      (scope) => registerWebhookAdminRoutes(scope, { store }),
      (scope) => registerCallAdminRoutes(scope, { store, live: fleet.calls }),
      (scope) => registerLiveCallAdminRoutes(scope, { calls: fleet.calls, dialPolicy: policies.dial }),
      (scope) =>
        registerRecordingAdminRoutes(scope, {
          recordings: recordings.store,
          calls: fleet.calls,
          records: store,
        }),
      (scope) => registerListenRoutes(scope, { listening: fleet.listening }),
      (scope) =>
        registerLiveEventRoutes(scope, {
          live: fleet.live,
          feed: fleet.feed,
          campaigns: outbound.service,
          store,
          now: Date.now,
        }),
      (scope) =>
        registerPlaceCallRoutes(scope, {
          profiles: config.profiles,
          defaultProfile: config.numbers.default,
          carriers: placing?.carriers ?? [],
          admit: (carrier) => intake.admit(carrier),
          dialPolicy: policies.dial,
          fetchPolicy: policies.fetch,
          isDoNotCall: async (number) => (await store.getDoNotCall(number)) !== null,
          place: (call) => placing!.place(call),
        }),
      (scope) => registerCampaignAdminRoutes(scope, { campaigns: outbound.service }),
      (scope) => registerDncAdminRoutes(scope, { store, now: Date.now }),
    ]),
    { prefix: '/v1' },
  );
}

export default fp(adminRoom, {
  name: 'callbridge-admin',
  decorators: { fastify: ['config', 'store', 'intake'] },
  dependencies: ['callbridge-trust', 'callbridge-recordings', 'callbridge-fleet', 'callbridge-outbound'],
});
