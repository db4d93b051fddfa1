// A carrier that exists only in tests, plugged in like any other: it proves the call core serves a
// carrier it has never heard of. Its webhook is JSON, its media stream binary audio frames with
// JSON text frames for everything else, its token travels only in the media URL's path.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { bytesPerMs, type MediaFormat, MULAW_8K } from '../../src/audio/format.js';
import type {
  CallIntake,
  CarrierAdapter,
  CarrierControl,
  LegCodec,
  LegEvent,
} from '../../src/call/carrier-port.js';
import { BadRequestError, CarrierFrameError, UnauthorizedError } from '../../src/errors.js';

export const FAKE_UPGRADE_HEADER = 'x-fake-carrier-key';

export interface FakeCarrierOptions {
  /** When set, the media upgrade must carry it in FAKE_UPGRADE_HEADER. */
  upgradeKey?: string;
  control?: CarrierControl | null;
}

export interface FakeAnnouncement {
  callId: string;
  from?: string;
  to?: string;
  format?: MediaFormat;
  /** Announce the call as an unverified request (nothing authenticated it). */
  unverified?: boolean;
}

function createFakeCodec(): LegCodec {
  return {
    parse(data: Buffer, isBinary: boolean): LegEvent {
      if (isBinary) return { type: 'audio', payload: Buffer.from(data) };
      let frame: Record<string, unknown>;
      try {
        frame = JSON.parse(data.toString('utf8')) as Record<string, unknown>;
      } catch {
        throw new CarrierFrameError('fake frame: invalid JSON');
      }
      switch (frame.event) {
        case 'start': {
          const format = (frame.format as MediaFormat | undefined) ?? MULAW_8K;
          if (typeof frame.callId !== 'string') throw new CarrierFrameError('fake start: callId');
          return {
            type: 'start',
            callSid: frame.callId,
            streamSid: `stream-${frame.callId}`,
            mediaFormat: { ...format },
            parameters: {},
          };
        }
        case 'dtmf':
          return { type: 'dtmf', digit: String(frame.digit) };
        case 'mark':
          return { type: 'mark', name: String(frame.name) };
        case 'stop':
          return { type: 'stop' };
        default:
          return { type: 'ignored', event: String(frame.event) };
      }
    },
    audio: (payload) => Buffer.from(payload),
    clear: () => JSON.stringify({ action: 'clear' }),
    mark: (name) => JSON.stringify({ action: 'mark', name }),
  };
}

export function createFakeCarrier(opts: FakeCarrierOptions = {}): CarrierAdapter {
  const adapter: CarrierAdapter = {
    name: 'fake',
    verified: opts.upgradeKey !== undefined,
    createCodec: createFakeCodec,
    downlink: (format) => ({ frameBytes: Math.round(bytesPerMs(format) * 20) }),
    control: opts.control ?? null,
    routes: (intake: CallIntake) =>
      async function plugin(app: FastifyInstance): Promise<void> {
        app.post('/carriers/fake/call', async (req) => {
          const body = req.body as FakeAnnouncement | undefined;
          if (typeof body?.callId !== 'string') throw new BadRequestError('callId is required');
          const admission = intake.admit('fake');
          if (admission !== 'admitted') return { declined: admission, say: intake.decline.message };
          const prepared = intake.prepare({
            carrier: 'fake',
            callSid: body.callId,
            from: body.from ?? '+15005550006',
            to: body.to ?? '+15005550001',
            direction: 'inbound',
            mediaFormat: body.format ?? MULAW_8K,
            // The fake carrier's announcements stand for verified ones unless a test says otherwise.
            verified: body.unverified !== true,
          });
          return { url: prepared.mediaUrl, profile: prepared.profile };
        });
      },
  };
  if (opts.upgradeKey !== undefined) {
    adapter.verifyUpgrade = (req: FastifyRequest) => {
      if (req.headers[FAKE_UPGRADE_HEADER] !== opts.upgradeKey) {
        throw new UnauthorizedError('the fake carrier key is missing or wrong');
      }
    };
  }
  return adapter;
}
