// The carriers' side of the call room: each served carrier's webhooks, given the call intake, and
// its media streams (src/call/intake/carrier-routes.ts), with the fixed prompts and the observer feed. The
// intake and the media sockets are fed here by the rooms above the call core: the fleet (store
// reachability, ready peers, pre-warmed agents elsewhere), the recordings, the outbound reports and
// the trust policies. The intake is decorated as `app.intake` for the single-call route.
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Logger } from 'pino';
import type { CallIntake } from '../call/carrier-port.js';
import { carrierRoutes } from '../call/intake/carrier-routes.js';
import { admitNewCall, createCallIntake } from '../call/intake/intake.js';
import type { ForeignStream, MediaSocketDeps } from '../call/stream/media-socket.js';
import { observerRoutes } from '../call/watch/observer.js';
import { promptRoutes } from '../call/intake/prompt-routes.js';
import { VoicemailRecordings } from '../call/outbound/voicemail-recordings.js';

declare module 'fastify' {
  interface FastifyInstance {
    intake: CallIntake;
  }
}

export interface CarrierCallsOptions {
  logger: Logger;
  /**
   * Tells the instance that prepared a call, whose stream arrived here instead, to close the agent
   * it pre-warmed for it. Default: the fleet's relay.
   */
  releaseRemotePrewarm?: (stream: ForeignStream) => void;
}

async function carrierCalls(app: FastifyInstance, opts: CarrierCallsOptions): Promise<void> {
  const { config, store, metrics, calls, fleet, recordings, outbound, policies } = app;
  const { registry, prewarm, admission, pending, verdicts, prompts, dial } = calls;
  const isDraining = () => calls.draining;
  // Fetched once per URL, kept beside the rendered prompts.
  const voicemailRecordings = new VoicemailRecordings({
    cacheDir: join(config.dataDir, 'voicemails'),
    fetchPolicy: policies.fetch,
  });
  const intake = createCallIntake({
    claimOnce: (key, validForMs) => store.claimOnce(key, validForMs),
    contexts: calls.contexts,
    config,
    dial,
    metrics,
    logger: opts.logger,
    registry,
    prewarm,
    admission,
    isDraining,
    verdicts,
    onOutboundStatus: (report) => outbound.reports.carrierStatus(report),
    onOutboundCallIdentified: (attemptId, carrier, callSid) =>
      outbound.reports.callIdentified(attemptId, carrier, callSid),
    pending,
    storeReachable: fleet.storeReachable,
    readyPeer: fleet.readyPeer,
  });
  const media: MediaSocketDeps = {
    config,
    store,
    dial,
    metrics,
    logger: opts.logger,
    registry,
    events: calls.events,
    prewarm,
    verdicts,
    admitCall: () =>
      admitNewCall({ registry, prewarm, admission, isDraining, storeReachable: fleet.storeReachable }),
    releaseRemotePrewarm: opts.releaseRemotePrewarm ?? fleet.releaseRemotePrewarm,
    pending,
    prompts: (kind, format, options) => prompts.promptAudio(kind, format, options),
    voicemailRecordings: (url, format) => voicemailRecordings.get(url, format),
    dialPolicy: policies.dial,
    recordCall: (call) => recordings.recordCall(call),
    saveRecord: (record) => calls.ended(record),
  };
  app.decorate('intake', intake);
  await app.register(carrierRoutes(app.carriers, intake, media));
  await app.register(promptRoutes((kind, format) => prompts.promptAudio(kind, format)));
  await app.register(
    observerRoutes({
      secret: config.streamTokenSecret,
      adminToken: config.adminToken,
      events: fleet.feed,
      standing: async (callSid, carrier) => {
        const live = await fleet.calls.list();
        if (live.some((call) => call.callSid === callSid && (carrier === null || call.carrier === carrier)))
          return 'live';
        const record = await store.getCallRecord(callSid);
        return record !== null && (carrier === null || record.carrier === carrier) ? 'ended' : 'unknown';
      },
      waitForCallMs: config.streamTokenTtlMs,
    }),
  );
}

export default fp(carrierCalls, {
  name: 'callbridge-carrier-calls',
  decorators: { fastify: ['config', 'store', 'carriers'] },
  dependencies: [
    'callbridge-metrics',
    'callbridge-trust',
    'callbridge-calls',
    'callbridge-recordings',
    'callbridge-fleet',
    'callbridge-outbound',
  ],
});
