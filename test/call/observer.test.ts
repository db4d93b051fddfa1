// The call's event feed: Server-Sent Events for whoever placed the call (the observer token from
// the voice webhook answer) or the operator (ADMIN_TOKEN), and for nobody else.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FakeAgent, startFakeAgent } from '../helpers/fake-agent.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { newCallSid, openMediaStream, voiceWebhook } from '../helpers/twilio-carrier.js';

const ADMIN_TOKEN = 'admin-token-for-the-feed-tests';
let agent: FakeAgent;
let server: TestServer;

beforeEach(async () => {
  agent = await startFakeAgent();
  server = await startServer({ AGENT_URL: agent.url, AGENT_API_KEY: 'key', ADMIN_TOKEN });
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
    const answer = await voiceWebhook(server.baseUrl, { CallSid: callSid, From: '+1', To: '+2' });
    expect(answer.observer).toBeTruthy();
    const res = await fetch(`${server.baseUrl}/calls/${callSid}/events`, {
      headers: { authorization: `Bearer ${answer.observer}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const feed = readFeed(res);
    const carrier = await openMediaStream(answer.streamUrl, { callSid });
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
    const other = await voiceWebhook(server.baseUrl, { CallSid: newCallSid(), From: '+1', To: '+2' });
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
});
