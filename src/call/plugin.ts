// The call room on the app, decorated as `app.calls`: the live calls and the calls prepared for
// them, the admitted concurrency, the agent dialer every call uses, the fixed prompts, and the
// WebSocket server media streams arrive on, its sockets watched by pings. Every call record, once
// its call has ended, is handed to the listeners of `onEnded` (the ended-call pipeline, the dialer's
// reports). The carriers' routes that feed the room are registered above it (src/app/carrier-calls.ts).
import websocket from '@fastify/websocket';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Logger } from 'pino';
import type { AgentDialer } from '../agent/dialer.js';
import { AGENT_REFUSED_CODE, AgentConnectError } from '../errors.js';
import { PromptAudio } from '../speech/prompts.js';
import type { CallRecord } from '../store/call-record.js';
import { AdmissionControl } from './intake/admission.js';
import { CallEventHub } from './watch/events.js';
import { startPingSweep } from './stream/liveness.js';
import { MachineVerdicts } from './outbound/machine-verdicts.js';
import { outboundContexts, type OutboundContexts } from './outbound/outbound-context.js';
import { PendingStreams } from './intake/pending-streams.js';
import { type PrewarmedAgent, PrewarmPool } from './intake/prewarm.js';
import { CallRegistry } from './watch/registry.js';

export interface CallRoom {
  registry: CallRegistry;
  events: CallEventHub;
  prewarm: PrewarmPool<PrewarmedAgent>;
  /** Calls prepared here whose stream has not arrived: a drain waits for them too. */
  pending: PendingStreams;
  admission: AdmissionControl;
  verdicts: MachineVerdicts;
  /** Outbound calls' contexts, kept in the shared store; carriers carry only their references. */
  contexts: OutboundContexts;
  /** The fixed prompts and campaign voicemails as audio (`promptAudio(kind, format, {text})`). */
  prompts: PromptAudio;
  /** Dials a call's agent; every refusal (429) lowers the admitted concurrency for a while. */
  dial: AgentDialer;
  /** Set when the instance drains: no new call is admitted. */
  draining: boolean;
  /** Adds a listener for every call record once its call has ended, called in the order added. */
  onEnded(listener: (record: CallRecord) => void): void;
  /** A call ended (or, for an outbound call never answered, its carrier said so): here is its record. */
  ended(record: CallRecord): void;
}

declare module 'fastify' {
  interface FastifyInstance {
    calls: CallRoom;
  }
}

export interface CallRoomOptions {
  logger: Logger;
  dial: AgentDialer;
  /** The fixed prompts as the process renders them; default: the bundled recordings. */
  prompts?: PromptAudio;
}

/** Largest WebSocket message accepted from a carrier; media frames are a few hundred bytes. */
const MAX_MEDIA_FRAME_BYTES = 64 * 1024;
const ADMISSION_RECOVER_EVERY_MS = 2_000;

async function callRoom(app: FastifyInstance, opts: CallRoomOptions): Promise<void> {
  const { config, metrics, store } = app;
  const registry = new CallRegistry();
  const admission = new AdmissionControl({
    maxCalls: config.maxCalls,
    recoverEveryMs: ADMISSION_RECOVER_EVERY_MS,
    onChange: (limit) => metrics.admissionLimit.set(limit),
  });
  metrics.admissionLimit.set(config.maxCalls);
  // Every agent 429, whoever dialed, is counted and lowers the admitted concurrency for a while.
  const dial: AgentDialer = async (settings, logger) => {
    try {
      return await opts.dial(settings, logger);
    } catch (err) {
      if (err instanceof AgentConnectError && err.code === AGENT_REFUSED_CODE) {
        metrics.agentRefused.inc();
        admission.refused(registry.size);
      }
      throw err;
    }
  };
  const endedListeners: ((record: CallRecord) => void)[] = [];
  const room: CallRoom = {
    registry,
    events: new CallEventHub(),
    prewarm: new PrewarmPool<PrewarmedAgent>({
      onExpired: () => metrics.prewarm.inc({ outcome: 'expired' }),
      onReplaced: () => metrics.prewarm.inc({ outcome: 'replaced' }),
    }),
    pending: new PendingStreams(),
    admission,
    verdicts: new MachineVerdicts(registry),
    contexts: outboundContexts(config.streamTokenSecret, store),
    // Without a configured renderer the bundled recordings play.
    prompts:
      opts.prompts ??
      new PromptAudio({ config: null, api: null, cacheDir: '', logger: opts.logger, metrics }),
    dial,
    draining: false,
    onEnded: (listener) => void endedListeners.push(listener),
    ended: (record) => {
      for (const listener of endedListeners) listener(record);
    },
  };
  app.decorate('calls', room);

  await app.register(websocket, {
    options: { maxPayload: MAX_MEDIA_FRAME_BYTES },
    errorHandler: (err, socket, req) => {
      // A peer breaking the WebSocket protocol (frame over maxPayload, text not UTF-8) is its fault:
      // `ws` has already sent the fitting close code (RFC 6455 section 7.4.1); let that close finish.
      const { code } = err as NodeJS.ErrnoException;
      if (typeof code === 'string' && code.startsWith('WS_ERR_')) {
        req.log.warn({ err: err.message }, 'carrier socket broke the WebSocket protocol');
        return;
      }
      req.log.error({ err }, 'carrier socket failed');
      socket.terminate();
    },
  });
  const pinger = startPingSweep(app, config.carrierPingIntervalMs);
  app.addHook('onClose', async () => {
    clearInterval(pinger);
    room.prewarm.closeAll();
    room.pending.clear();
  });
}

export default fp(callRoom, {
  name: 'callbridge-calls',
  decorators: { fastify: ['config', 'store'] },
  dependencies: ['callbridge-metrics'],
});
