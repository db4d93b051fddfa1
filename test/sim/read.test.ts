// The local text intelligence endpoint, POST /v1/read, against the spec's rules and every error row
// of section 7 that touches it.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type LocalAgent, startLocalAgent } from '../../src/sim/agent/server.js';
import { refusedStatus } from './local-agent-client.js';

let agent: LocalAgent;
let documents: Server | undefined;

beforeEach(async () => {
  agent = await startLocalAgent({ port: 0, apiKeys: ['read-key'] });
});

afterEach(async () => {
  await agent.close();
  await new Promise<void>((resolve) => (documents ? documents.close(() => resolve()) : resolve()));
  documents = undefined;
});

const FULL = 'language=en&summarize=v2&sentiment=true&topics=true&intents=true';

/** What the tests read of an answer: an analysis, or an error's code and message. */
interface ReadBody {
  err_code?: string;
  err_msg?: string;
  metadata: { language: string };
  results: {
    summary?: { text: string };
    sentiments?: { average: unknown };
    topics: { segments: Array<{ topics: Array<{ topic: string }> }> };
    intents: { segments: Array<{ intents: Array<{ intent: string }> }> };
  };
}

async function read(query: string, body: unknown, init: { method?: string; auth?: string | null } = {}) {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (init.auth !== null) headers.authorization = init.auth ?? 'Token read-key';
  const method = init.method ?? 'POST';
  const res = await fetch(`${agent.httpUrl}/v1/read?${query}`, {
    method,
    headers,
    ...(method === 'POST' ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as ReadBody };
}

/** A document host for `url` bodies: text at /notes.txt, audio at /call.wav. */
async function serveDocuments(): Promise<string> {
  documents = createServer((req, res) => {
    if (req.url === '/notes.txt') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('Caller: I would like to book an appointment. Agent: Sure, Tuesday works. Thanks, great.');
    } else if (req.url === '/call.wav') {
      res.writeHead(200, { 'content-type': 'audio/wav' });
      res.end(Buffer.alloc(64));
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise<void>((resolve) => documents!.listen(0, '127.0.0.1', () => resolve()));
  return `http://127.0.0.1:${(documents.address() as AddressInfo).port}`;
}

describe('POST /v1/read (docs/protocols/speech-service.md sections 5 and 9)', () => {
  it('answers a summary, sentiment, topics and intents worked out from the text, the same every time', async () => {
    const text = 'Caller: Where is my order W-1? It is late. Agent: It ships tomorrow, thanks for waiting.';
    const first = await read(FULL, { text });
    expect(first.status).toBe(200);
    expect(first.body.metadata.language).toBe('en');
    // The whole conversation: what the caller wanted, what the agent said.
    expect(first.body.results.summary).toEqual({
      text:
        'The caller wanted to check order status (order status). ' +
        'The agent said "It ships tomorrow, thanks for waiting."',
    });
    // The caller's words are scored, not the agent's thanks.
    expect(first.body.results.sentiments?.average).toEqual({ sentiment: 'neutral', sentiment_score: 0 });
    expect(first.body.results.topics.segments[0]?.topics.map((t: { topic: string }) => t.topic)).toEqual([
      'order status',
    ]);
    expect(first.body.results.intents.segments[0]?.intents.map((i: { intent: string }) => i.intent)).toEqual([
      'check order status',
    ]);
    const second = await read(FULL, { text });
    expect(second.body.results).toEqual(first.body.results);
  });

  it('answers only the features asked for; summarize=true works as v2 does', async () => {
    const { body } = await read('language=en&summarize=true', { text: 'Hello there. Goodbye.' });
    expect(Object.keys(body.results)).toEqual(['summary']);
    expect((await read('language=en&sentiment=true', { text: 'Great, thanks.' })).body.results).toEqual({
      sentiments: expect.objectContaining({ average: { sentiment: 'positive', sentiment_score: 0.848 } }),
    });
  });

  it('400 INVALID_QUERY_PARAMETER for a missing language, before any other problem', async () => {
    const expected = {
      status: 400,
      body: { err_code: 'INVALID_QUERY_PARAMETER', err_msg: 'missing field language' },
    };
    expect(await read('summarize=v2', { text: 'hi' })).toEqual(expected);
    // A body that is wrong too, a bad feature value, no credentials: language still comes first.
    expect(await read('summarize=v9', { text: 'a', url: 'b' }, { auth: null })).toEqual(expected);
    expect(await read('language=', 'not json')).toEqual(expected);
  });

  it('accepts en-US and echoes it as en; refuses multi and other languages', async () => {
    const us = await read('language=en-US&summarize=v2', { text: 'Hello. Bye.' });
    expect(us.status).toBe(200);
    expect(us.body.metadata.language).toBe('en');
    for (const language of ['multi', 'es', 'fr-FR']) {
      const refused = await read(`language=${language}&summarize=v2`, { text: 'Hola.' });
      expect(refused.status).toBe(400);
      expect(refused.body.err_code).toBe('INVALID_QUERY_PARAMETER');
      expect(refused.body.err_msg).toContain(language);
    }
  });

  it('PAYLOAD_ERROR for a body with both or neither of text and url', async () => {
    for (const body of [
      {},
      { text: 'a', url: 'https://example.com/a.txt' },
      { other: 1 },
      [],
      'null',
      'not json',
    ]) {
      const answer = await read(FULL, body);
      expect(answer.status).toBe(400);
      expect(answer.body.err_code).toBe('PAYLOAD_ERROR');
    }
    expect((await read(FULL, { text: '' })).body.err_code).toBe('PAYLOAD_ERROR');
    expect((await read(FULL, { text: 42 })).body.err_code).toBe('PAYLOAD_ERROR');
  });

  it('reads a url pointing at a plain-text document; REMOTE_CONTENT_ERROR for one pointing at audio', async () => {
    const base = await serveDocuments();
    const text = await read(FULL, { url: `${base}/notes.txt` });
    expect(text.status).toBe(200);
    expect(text.body.results.intents.segments[0]?.intents.map((i: { intent: string }) => i.intent)).toContain(
      'book an appointment',
    );
    const audio = await read(FULL, { url: `${base}/call.wav` });
    expect(audio).toEqual({
      status: 400,
      body: {
        err_code: 'REMOTE_CONTENT_ERROR',
        err_msg: 'the url points at audio, not a plain-text document',
      },
    });
    expect((await read(FULL, { url: `${base}/missing.txt` })).body.err_code).toBe('REMOTE_CONTENT_ERROR');
    expect((await read(FULL, { url: 'ftp://example.com/a.txt' })).body.err_code).toBe('PAYLOAD_ERROR');
  });

  it('405 for GET and for a WebSocket upgrade', async () => {
    const get = await fetch(`${agent.httpUrl}/v1/read?language=en`, {
      headers: { authorization: 'Token read-key' },
    });
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    expect(await refusedStatus(agent.url, 'Token read-key', '/v1/read?language=en')).toBe(405);
  });

  it('refuses bad feature values, repeated and unknown parameters, and missing credentials', async () => {
    expect((await read('language=en&summarize=v3', { text: 'a' })).body.err_code).toBe(
      'INVALID_QUERY_PARAMETER',
    );
    expect((await read('language=en&sentiment=yes', { text: 'a' })).body.err_code).toBe(
      'INVALID_QUERY_PARAMETER',
    );
    expect((await read('language=en&language=en', { text: 'a' })).status).toBe(400);
    expect((await read('language=en&diarize=true', { text: 'a' })).body.err_msg).toMatch(
      /unknown parameter "diarize"/,
    );
    expect((await read('language=en', { text: 'a' }, { auth: null })).status).toBe(401);
    expect((await read('language=en', { text: 'a' }, { auth: 'Token wrong' })).status).toBe(401);
  });

  it('refuses a body over its limit without reading it all', async () => {
    const answer = await read('language=en', { text: 'x'.repeat(1024 * 1024 + 10) });
    expect(answer.status).toBe(413);
  });
});

// The analysis reads the whole call and judges the caller honestly: a voicemail (the agent alone)
// is neutral, not "negative" for its "sorry"; a call whose caller said no readable words is
// neutral, not "positive" for the agent's thanks; an unhappy caller is negative.
describe('the local analysis of a whole conversation', () => {
  const full = async (text: string) => (await read(FULL, { text })).body.results;

  it('calls a voicemail neutral and says the caller did not speak', async () => {
    const results = await full(
      'Agent: Hi Ada, this is Example Dental. Sorry we missed you; please call us back. Goodbye.',
    );
    expect(results.sentiments?.average).toEqual({ sentiment: 'neutral', sentiment_score: 0 });
    expect(results.summary?.text).toMatch(/^The caller did not speak\. The agent said "Hi Ada/);
  });

  it('does not score the agent for a caller whose words were not transcribed', async () => {
    const results = await full(
      'Agent: Thank you for calling Example Dental. How can I help you today?\n' +
        'Caller: (caller spoke for 2.6 s)\nAgent: Sure, I can help with that. Thanks!',
    );
    expect(results.sentiments?.average).toEqual({ sentiment: 'neutral', sentiment_score: 0 });
    expect(results.summary?.text).toBe(
      'The caller spoke once, with no words the analysis could read. The agent spoke twice, opening ' +
        'with "Thank you for calling Example Dental. How can I help you today?" and closing with ' +
        '"Sure, I can help with that. Thanks!"',
    );
  });

  it('finds an unhappy caller negative, from the middle of the call too', async () => {
    const results = await full(
      'Agent: Hello, Example Dental.\nCaller: Hi.\nAgent: How can I help?\n' +
        'Caller: This is terrible, my crown is broken and nobody called me back.\nAgent: Sorry to hear that.',
    );
    expect(results.sentiments?.average).toMatchObject({ sentiment: 'negative' });
    expect(results.summary?.text).toMatch(/^The caller said "This is terrible, my crown is broken/);
  });
});
