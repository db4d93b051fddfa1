// Admission of a started stream, with no socket: a real store claims each stream token once, and
// the answer says what the socket does next (admitted, refused, declined, or gone).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MULAW_8K } from '../../../src/audio/format.js';
import type { Admission } from '../../../src/call/carrier-port.js';
import { issueStreamToken } from '../../../src/call/intake/stream-token.js';
import { type AdmitDeps, admitStream, type StreamStart } from '../../../src/call/stream/admit.js';
import type { ForeignStream } from '../../../src/call/stream/deps.js';
import { createMetrics } from '../../../src/metrics/metrics.js';
import { openSqliteStore } from '../../../src/store/sqlite.js';
import type { Store } from '../../../src/store/store.js';

const SECRET = 'stream-token-secret-for-tests';
const CONFIG = { streamTokenSecret: SECRET, streamTokenTtlMs: 60_000, instanceId: 'here' };

let dir: string;
let store: Store;
let released: ForeignStream[];
let capacity: Admission;

function deps(overrides: Partial<AdmitDeps> = {}): AdmitDeps {
  return {
    config: CONFIG,
    store,
    metrics: createMetrics('test'),
    registry: { has: () => false },
    admitCall: () => capacity,
    releaseRemotePrewarm: (stream) => released.push(stream),
    ...overrides,
  };
}

function startOf(callSid: string, opts: { instance?: string; token?: string } = {}): StreamStart {
  const token =
    opts.token ??
    issueStreamToken(
      SECRET,
      {
        carrier: 'twilio',
        callSid,
        profile: 'default',
        from: '+15005550006',
        to: '+15005550001',
        direction: 'inbound',
        instance: opts.instance ?? 'here',
      },
      60_000,
    );
  return { type: 'start', callSid, streamSid: `MZ${callSid}`, mediaFormat: MULAW_8K, token, parameters: {} };
}

const ctx = (waiting = () => true) => ({
  carrier: 'twilio',
  pathToken: undefined,
  logger: pino({ level: 'silent' }),
  waiting,
});

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'callbridge-admit-'));
  store = openSqliteStore({ file: join(dir, 'callbridge.db') });
  released = [];
  capacity = 'admitted';
});

afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('admitting a stream', () => {
  it('admits a valid token once, with its grant; the same token again is refused as replayed', async () => {
    const start = startOf('CA1');
    const first = await admitStream(start, ctx(), deps());
    expect(first).toMatchObject({
      outcome: 'admitted',
      grant: { callSid: 'CA1', instance: 'here' },
      outbound: null,
    });
    expect(await admitStream(start, ctx(), deps())).toEqual({
      outcome: 'refused',
      reason: 'token_replayed',
      code: 1008,
    });
  });

  it('refuses a token that is not ours, or bound to another call', async () => {
    expect(await admitStream(startOf('CA2', { token: 'v1.junk.junk' }), ctx(), deps())).toMatchObject({
      outcome: 'refused',
      code: 1008,
    });
    const other = startOf('CA3');
    const stolen = { ...startOf('CA4'), token: other.token! };
    expect(await admitStream(stolen, ctx(), deps())).toMatchObject({ outcome: 'refused' });
  });

  it('declines when the store cannot claim the token: the caller is told, no call is made', async () => {
    const away = { ...store, claimOnce: () => Promise.reject(new Error('store away')) } as Store;
    expect(await admitStream(startOf('CA5'), ctx(), deps({ store: away }))).toEqual({
      outcome: 'declined',
      reason: 'store_unavailable',
    });
  });

  it('a call prepared on another instance releases its pre-warm there and is judged by capacity here', async () => {
    capacity = 'at_capacity';
    const start = startOf('CA6', { instance: 'there' });
    expect(await admitStream(start, ctx(), deps())).toEqual({ outcome: 'declined', reason: 'at_capacity' });
    expect(released).toEqual([{ instance: 'there', carrier: 'twilio', callSid: 'CA6' }]);
  });

  it('is gone, with nothing done, when the carrier left while the token was claimed', async () => {
    let checked = 0;
    const waiting = () => {
      checked++;
      return false;
    };
    expect(await admitStream(startOf('CA7', { instance: 'there' }), ctx(waiting), deps())).toEqual({
      outcome: 'gone',
    });
    expect(checked).toBe(1);
    expect(released).toEqual([]);
  });
});
