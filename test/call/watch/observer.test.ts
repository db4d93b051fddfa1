// The call's event feed: Server-Sent Events for whoever placed the call (the observer token from
// the answer to a verified voice webhook) or the operator (ADMIN_TOKEN), and for nobody else. The
// token is bound to its carrier and call, and dies with the call.
import twilio from 'twilio';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { issueObserverToken, readObserverToken } from '../../../src/call/watch/observer.js';
import { type FakeAgent, startFakeAgent } from '../../helpers/fake-agent.js';
import { startServer, type TestServer } from '../../helpers/server.js';
import { newCallSid, openMediaStream, voiceWebhook } from '../../helpers/twilio-carrier.js';

const ADMIN_TOKEN = 'admin-token-for-the-feed-tests';
const AUTH_TOKEN = 'twilio-auth-token-of-the-feed-tests';
const TWILIO = { TWILIO_ACCOUNT_SID: `AC${'2'.repeat(32)}`, TWILIO_AUTH_TOKEN: AUTH_TOKEN };
let agent: FakeAgent;
let server: TestServer;

async function start(env: Record<string, string> = {}) {
  server = await startServer({ AGENT_URL: agent.url, AGENT_API_KEY: 'key', ADMIN_TOKEN, ...TWILIO, ...env });
}

beforeEach(async () => {
  agent = await startFakeAgent();
  await start();
});

/** A call announced with a signed voice webhook, as Twilio announces it. */
const signedCall = (callSid: string) =>
  voiceWebhook(server.baseUrl, { CallSid: callSid, From: '+1', To: '+2' }, { authToken: AUTH_TOKEN });

/** Its media stream, with the upgrade signed as Twilio signs it. */
const signedStream = (streamUrl: string, callSid: string) =>
  openMediaStream(streamUrl, {
    callSid,
    headers: { 'x-twilio-signature': twilio.getExpectedTwilioSignature(AUTH_TOKEN, streamUrl, {}) },
  });

afterEach(async () => {
  await server.close();
  await agent.close();
});

/** Reads `data:` events from the feed until the `end` event or the stream closes. */
async function readFeed(res: Response): Promise<Array<Record<string, unknown>>> {
  const events: Array<Record<string, unknown>> = [];
  const decoder = new TextDecoder();
  let buffered = '';
  for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
    buffered += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = buffered.indexOf('\n\n')) >= 0) {
      const block = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      if (block.startsWith('data: ')) events.push(JSON.parse(block.slice(6)));
    }
  }
  return events;
}

describe('call event feed', () => {
  it('streams the transcript, barge-ins and the end to the holder of the observer token', async () => {
    const callSid = newCallSid();
    const answer = await signedCall(callSid);
    expect(answer.observer).toBeTruthy();
    const res = await fetch(`${server.baseUrl}/calls/${callSid}/events`, {
      headers: { authorization: `Bearer ${answer.observer}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const feed = readFeed(res);
    const carrier = await signedStream(answer.streamUrl, callSid);
    carrier.start(answer.parameters);
    const conn = await agent.nextConnection();
    conn.send({ type: 'SettingsApplied' });
    conn.send({ type: 'AgentStartedSpeaking', total_latency: 0.1, tts_latency: 0.1, ttt_latency: 0 });
    conn.send({ type: 'ConversationText', role: 'assistant', content: 'Hello!' });
    conn.sendAudio(Buffer.alloc(8000, 0x55));
    await carrier.waitForAudio(8000);
    conn.send({ type: 'UserStartedSpeaking' });
    await carrier.waitFor((m) => m.event === 'clear');
    carrier.stop();
    expect(await feed).toEqual([
      { type: 'transcript', role: 'assistant', content: 'Hello!' },
      { type: 'barge-in' },
      { type: 'end', reason: 'caller_hangup' },
    ]);
  });

  it('refuses a missing, wrong or other call’s token, and accepts the admin token', async () => {
    const callSid = newCallSid();
    const other = await signedCall(newCallSid());
    const url = `${server.baseUrl}/calls/${callSid}/events`;
    const refused: Array<Record<string, string>> = [
      {},
      { authorization: 'Bearer nope' },
      { authorization: `Bearer ${other.observer}` },
    ];
    for (const headers of refused) {
      const res = await fetch(url, { headers });
      expect(res.status).toBe(401);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('CALLBRIDGE_UNAUTHORIZED');
    }
    const controller = new AbortController();
    const admin = await fetch(url, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      signal: controller.signal,
    });
    expect(admin.status).toBe(200);
    controller.abort();
    await new Promise((r) => setTimeout(r, 50));
    expect(server.app.callbridge.events.subscriberCount).toBe(0);
  });

  it('gives an unsigned voice webhook no observer token', async () => {
    // Issue 19: an unauthenticated request once got a token that streamed another call's transcript.
    await server.close();
    await start({ TWILIO_ACCOUNT_SID: '', TWILIO_AUTH_TOKEN: '' });
    const answer = await voiceWebhook(server.baseUrl, { CallSid: newCallSid(), From: '+1', To: '+2' });
    expect(answer.status).toBe(200);
    expect(answer.observer).toBeNull();
  });

  it('binds a token to its carrier and its call', () => {
    const secret = 'stream-token-secret';
    const token = issueObserverToken(secret, { carrier: 'exotel', callSid: 'CA1' }, 1000, 0);
    expect(readObserverToken(secret, token, 'CA1')).toEqual({ carrier: 'exotel', expiresAtMs: 1000 });
    expect(readObserverToken(secret, token, 'CA2')).toBeNull();
    expect(readObserverToken(secret, token.replace('.exotel.', '.twilio.'), 'CA1')).toBeNull();
    expect(readObserverToken('another-secret', token, 'CA1')).toBeNull();
    expect(readObserverToken(secret, `${token}.x`, 'CA1')).toBeNull();
  });

  it("refuses a token another carrier's verified request got for this call's id", async () => {
    // Issue 30: an Exotel request naming a live Twilio call's id got a token that opened its feed.
    const callSid = newCallSid();
    const answer = await signedCall(callSid);
    const carrier = await signedStream(answer.streamUrl, callSid);
    carrier.start(answer.parameters);
    const conn = await agent.nextConnection();
    conn.send({ type: 'SettingsApplied' });
    await expect.poll(() => server.app.callbridge.registry.size).toBe(1);
    const exotel = issueObserverToken(
      server.config.streamTokenSecret,
      { carrier: 'exotel', callSid },
      60_000,
    );
    const res = await fetch(`${server.baseUrl}/calls/${callSid}/events`, {
      headers: { authorization: `Bearer ${exotel}` },
    });
    expect(res.status).toBe(401);
    const own = await fetch(`${server.baseUrl}/calls/${callSid}/events`, {
      headers: { authorization: `Bearer ${answer.observer}` },
    });
    expect(own.status).toBe(200);
    const feed = readFeed(own);
    carrier.stop();
    expect(await feed).toEqual([{ type: 'end', reason: 'caller_hangup' }]);
  });

  it("ends, with nothing said, a feed opened early whose call turns out to be another carrier's", async () => {
    const callSid = newCallSid();
    const exotel = issueObserverToken(
      server.config.streamTokenSecret,
      { carrier: 'exotel', callSid },
      60_000,
    );
    const res = await fetch(`${server.baseUrl}/calls/${callSid}/events`, {
      headers: { authorization: `Bearer ${exotel}` },
    });
    expect(res.status).toBe(200);
    const feed = readFeed(res);
    const answer = await signedCall(callSid);
    const carrier = await signedStream(answer.streamUrl, callSid);
    carrier.start(answer.parameters);
    const conn = await agent.nextConnection();
    conn.send({ type: 'SettingsApplied' });
    conn.send({ type: 'ConversationText', role: 'assistant', content: 'Your balance is 42.' });
    expect(await feed).toEqual([]);
    carrier.stop();
  });

  it('refuses a token of an ended call, and ends a feed whose call never comes', async () => {
    await server.close();
    await start({ STREAM_TOKEN_TTL_MS: '1500' });
    const callSid = newCallSid();
    const answer = await signedCall(callSid);
    const carrier = await signedStream(answer.streamUrl, callSid);
    carrier.start(answer.parameters);
    const conn = await agent.nextConnection();
    conn.send({ type: 'SettingsApplied' });
    carrier.stop();
    await conn.closed;
    await expect.poll(async () => (await server.store.getCallRecord(callSid)) !== null).toBe(true);
    const late = await fetch(`${server.baseUrl}/calls/${callSid}/events`, {
      headers: { authorization: `Bearer ${answer.observer}` },
    });
    expect(late.status).toBe(401);

    // A call announced whose stream never arrives: its feed ends when the stream was due.
    const never = newCallSid();
    const unused = await signedCall(never);
    const res = await fetch(`${server.baseUrl}/calls/${never}/events`, {
      headers: { authorization: `Bearer ${unused.observer}` },
    });
    expect(res.status).toBe(200);
    expect(await readFeed(res)).toEqual([]);
    await expect.poll(() => server.app.callbridge.events.subscriberCount).toBe(0);
  });
});
