// SIGTERM on the real process while a webhook it answered still waits for its media stream: the
// instance stays up for that stream and carries the call to its end, then exits 0; a stream that
// another instance prepared, arriving meanwhile, is declined politely with no agent dialed.
import { randomBytes } from 'node:crypto';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MULAW_8K } from '../../src/audio/format.js';
import { fallbackAudio } from '../../src/call/session/fallback-audio.js';
import { issueStreamToken } from '../../src/call/intake/stream-token.js';
import { type FakeAgent, startFakeAgent } from '../helpers/fake-agent.js';
import { disposeAll, ensureBuilt, spawnServer, status } from '../helpers/server-process.js';
import { newCallSid, openMediaStream, voiceWebhook } from '../helpers/twilio-carrier.js';

const SECRET = 'fleet-drain-stream-token-secret-0000000';
const FRAME_BYTES = 160;
let agent: FakeAgent | undefined;

beforeAll(ensureBuilt, 120_000);
afterEach(async () => {
  await disposeAll();
  await agent?.close();
});

const TWILIO_TOKEN = 'drain-test-twilio-auth-token-000001';

describe('drain with streams still to come', () => {
  it('waits for the stream of a webhook it answered, carries that call, declines a foreign one, exits 0', async () => {
    agent = await startFakeAgent({ autoApply: true });
    const server = await spawnServer({
      AGENT_URL: agent.url,
      AGENT_API_KEY: 'key',
      STREAM_TOKEN_SECRET: SECRET,
      INSTANCE_ID: 'drain-1',
      // Long enough that only the stream's arrival, not its expiry, lets the process go.
      STREAM_TOKEN_TTL_MS: '60000',
      DRAIN_TIMEOUT_MS: '60000',
      // A signed webhook: only a verified one pre-warms an agent and holds a drain for its stream.
      TWILIO_ACCOUNT_SID: `AC${'d'.repeat(32)}`,
      TWILIO_AUTH_TOKEN: TWILIO_TOKEN,
      TWILIO_API_URL: 'http://127.0.0.1:9',
    });
    const callSid = newCallSid();
    const answer = await voiceWebhook(
      server.baseUrl,
      { CallSid: callSid, From: '+15005550006', To: '+15005550001' },
      { authToken: TWILIO_TOKEN },
    );
    expect(answer.streamUrl).toContain('/media/twilio/drain-1/');
    // Its agent is pre-warmed and waiting before the signal.
    const prewarmed = await agent.nextConnection();
    await prewarmed.waitFor('Settings');

    server.child.kill('SIGTERM');
    await expect.poll(() => status(server.baseUrl, '/readyz')).toBe(503);

    // A stream prepared by another instance: the caller hears the decline, no agent is dialed.
    const foreignSid = newCallSid();
    const foreignToken = issueStreamToken(
      SECRET,
      {
        carrier: 'twilio',
        callSid: foreignSid,
        profile: 'default',
        from: '+15005550007',
        to: '+15005550001',
        direction: 'inbound',
        instance: 'drain-2',
      },
      60_000,
    );
    const connectionsBefore = agent.connections.length;
    const foreign = await openMediaStream(
      `${server.baseUrl.replace('http', 'ws')}/media/twilio/drain-2/${foreignToken}`,
      { callSid: foreignSid, authToken: TWILIO_TOKEN },
    );
    foreign.start({});
    expect(await foreign.closed).toEqual({ code: 1000, reason: 'call ended' });
    const message = fallbackAudio(undefined, MULAW_8K)!;
    expect(foreign.audio().subarray(0, message.length).equals(message)).toBe(true);
    expect(agent.connections.length).toBe(connectionsBefore);

    // The stream of the webhook it answered before the signal still finds it, and is carried.
    const caller = await openMediaStream(answer.streamUrl, { callSid, authToken: TWILIO_TOKEN });
    caller.start(answer.parameters);
    const conn = prewarmed;
    expect((await conn.waitFor('Settings')).tags).toContain(`call:${callSid}`);
    const audio = randomBytes(FRAME_BYTES * 3);
    for (let at = 0; at < audio.length; at += FRAME_BYTES) caller.media(audio.subarray(at, at + FRAME_BYTES));
    expect((await conn.waitForAudio(audio.length)).equals(audio)).toBe(true);
    expect(server.child.exitCode).toBeNull();

    caller.stop();
    expect(await caller.closed).toEqual({ code: 1000, reason: 'stream stopped' });
    expect(await server.exited).toMatchObject({ code: 0, signal: null });
  }, 60_000);
});
