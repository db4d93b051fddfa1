// `app.callbridge`: the state the process and the tests read (src/main.ts drains with it), one
// object over the rooms' own decorators. `draining` is the call room's: setting it here stops the
// admission of new calls.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { AdmissionControl } from '../call/intake/admission.js';
import type { CallEventHub } from '../call/watch/events.js';
import type { PendingStreams } from '../call/intake/pending-streams.js';
import type { PrewarmedAgent, PrewarmPool } from '../call/intake/prewarm.js';
import type { CallRegistry } from '../call/watch/registry.js';
import type { DeclaredRoute } from '../admin/roles.js';
import type { Config } from '../config/types.js';
import type { Fleet } from '../fleet/index.js';
import type { Metrics } from '../metrics/metrics.js';
import type { OutboundRoom } from '../outbound/plugin.js';
import type { Recordings } from '../recording/recordings.js';
import type { PromptAudio } from '../speech/prompts.js';
import type { WebhookGateway } from '../webhooks/plugin.js';

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
  outbound: OutboundRoom;
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

async function state(app: FastifyInstance): Promise<void> {
  const { calls } = app;
  const { registry, events, prewarm, pending, admission, prompts } = calls;
  app.decorate('callbridge', {
    config: app.config,
    metrics: app.metrics,
    registry,
    events,
    gateway: app.gateway,
    prewarm,
    pending,
    admission,
    fleet: app.fleet,
    outbound: app.outbound,
    get draining() {
      return calls.draining;
    },
    set draining(value: boolean) {
      calls.draining = value;
    },
    prompts,
    recordings: app.recordings,
    adminRoutes: app.adminRoutes,
  });
}

export default fp(state, {
  name: 'callbridge-state',
  decorators: { fastify: ['config', 'gateway', 'adminRoutes'] },
  dependencies: ['callbridge-metrics', 'callbridge-calls', 'callbridge-fleet', 'callbridge-outbound'],
});
