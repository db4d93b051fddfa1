// A carrier's webhook routes on their own: a real Fastify app on an ephemeral port holding only the
// carrier's plugin, the project's error shape, and a fake CallIntake that records what it was asked.
import { randomBytes } from 'node:crypto';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyPluginAsync } from 'fastify';
import type { VerdictReport } from '../../src/call/amd-gate.js';
import type {
  Admission,
  CallAnnouncement,
  CallIntake,
  OutboundStatusReport,
  PreparedCall,
} from '../../src/call/carrier-port.js';
import { codeForStatus } from '../../src/errors.js';

export interface FakeIntake extends CallIntake {
  admission: Admission;
  announced: CallAnnouncement[];
  prepared: PreparedCall[];
  refusals: Array<{ carrier: string; reason: string }>;
  /** Outbound calls' final statuses and detection verdicts the routes reported. */
  statuses: OutboundStatusReport[];
  verdicts: Array<{ carrier: string; callSid: string; report: VerdictReport }>;
}

export const PUBLIC_MEDIA_BASE = 'wss://bridge.example.com/media';
export const INSTANCE = 'instance-1';

export function createFakeIntake(): FakeIntake {
  const intake: FakeIntake = {
    admission: 'admitted',
    announced: [],
    prepared: [],
    refusals: [],
    statuses: [],
    verdicts: [],
    outboundContext: () => null,
    outboundStatus(report) {
      intake.statuses.push(report);
    },
    machineVerdict(carrier, callSid, report) {
      intake.verdicts.push({ carrier, callSid, report });
    },
    admit: () => intake.admission,
    prepare(call) {
      intake.announced.push(call);
      const token = `tok${randomBytes(12).toString('base64url')}`;
      const prepared: PreparedCall = {
        token,
        mediaUrl: `${PUBLIC_MEDIA_BASE}/${call.carrier}/${INSTANCE}/${token}`,
        observerToken: `obs${randomBytes(8).toString('hex')}`,
        profile: 'default',
      };
      intake.prepared.push(prepared);
      return prepared;
    },
    decline: { message: 'Sorry, we cannot take your call right now.', redirectUrl: null },
    refused(carrier, reason) {
      intake.refusals.push({ carrier, reason });
    },
  };
  return intake;
}

export interface RoutesApp {
  app: FastifyInstance;
  baseUrl: string;
  /** `METHOD /path STATUS` of every request answered, in order. */
  answered: string[];
  close(): Promise<void>;
}

export async function startRoutesApp(plugin: FastifyPluginAsync): Promise<RoutesApp> {
  const app = Fastify({ logger: false });
  const answered: string[] = [];
  app.addHook('onResponse', async (req, reply) => {
    answered.push(`${req.method} ${req.url.split('?')[0]} ${reply.statusCode}`);
  });
  // The project's error shape, as app.ts answers it: no stack, no internal message.
  app.setErrorHandler((err: FastifyError, _req, reply) => {
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 600 ? err.statusCode : 500;
    const ours = typeof err.code === 'string' && err.code.startsWith('CALLBRIDGE_');
    const message = status >= 500 && !ours ? 'internal error' : err.message;
    return reply.code(status).send({ error: { code: ours ? err.code : codeForStatus(status), message } });
  });
  await app.register(plugin);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as { port: number };
  return { app, baseUrl: `http://127.0.0.1:${port}`, answered, close: () => app.close() };
}
