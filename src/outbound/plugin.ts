// The outbound room on the app, decorated as `app.outbound`: the carriers' placers composed into one
// originator, the campaign service and its dialer (started by the process once listening), and the
// reports that carry an outbound call's end to its campaign attempt. Every ended call's record
// reaches the reports through the call room's `onEnded`.
import { hostname } from 'node:os';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Logger } from 'pino';
import type { DialerOptions } from './dialer.js';
import { dialerOptionsOf } from './dialer-context.js';
import { createOutbound, type Outbound } from './index.js';
import { composeOriginator, type OutboundCalls } from './originator.js';
import type { CallPlacer, Originator } from './ports.js';
import { OutboundReports } from './reports.js';

export interface OutboundRoom extends Outbound {
  /** Places single calls and campaign attempts; null: no carrier can place calls here. */
  calls: OutboundCalls | null;
  reports: OutboundReports;
}

declare module 'fastify' {
  interface FastifyInstance {
    outbound: OutboundRoom;
  }
}

export interface OutboundRoomOptions {
  logger: Logger;
  /** The carriers that place calls here, the default first. */
  placers: readonly CallPlacer[];
  /** The carriers a campaign may name when none places calls (all those served). */
  carriers: readonly string[];
  /** Stands in for the carriers' placers in the dialer (tests). */
  originator?: Originator;
  /** The dialer's tuning beyond the configuration's (tests). */
  dialerOptions?: Partial<DialerOptions>;
}

async function outboundRoom(app: FastifyInstance, opts: OutboundRoomOptions): Promise<void> {
  const { config, store, metrics, policies, calls } = app;
  const placing =
    opts.placers.length > 0 ? composeOriginator(opts.placers, calls.contexts, policies.dial) : null;
  const outbound = createOutbound({
    config,
    store,
    metrics,
    logger: opts.logger,
    originator: opts.originator ?? placing?.originator ?? null,
    carriers: placing?.carriers ?? opts.carriers,
    carriersWithoutMachineDetection: placing?.carriersWithoutMachineDetection ?? [],
    // Campaign events reach the operator gateway like webhook events: same body, headers, signature.
    deliver: app.operatorGateway('campaigns'),
    instanceId: hostname(),
    dialerOptions: { ...dialerOptionsOf(config.dialer), ...opts.dialerOptions },
    dialPolicy: policies.dial,
    fetchPolicy: policies.fetch,
  });
  const reports = new OutboundReports({
    dialer: () => outbound.dialer,
    // An outbound call never answered has a record too: it ends like any call's.
    saveRecord: (record) => calls.ended(record),
    isLive: (callSid) => calls.registry.has(callSid),
    logger: opts.logger.child({ component: 'outbound' }),
  });
  calls.onEnded((record) => reports.callRecorded(record));
  app.decorate('outbound', { ...outbound, calls: placing, reports });
  app.addHook('onClose', async () => {
    await outbound.dialer?.stop();
    reports.close();
  });
}

export default fp(outboundRoom, {
  name: 'callbridge-outbound',
  decorators: { fastify: ['config', 'store', 'operatorGateway'] },
  dependencies: ['callbridge-metrics', 'callbridge-trust', 'callbridge-calls'],
});
