// The local speak endpoints: batch POST /v1/speak and /v2/speak, and the streaming /v2/speak socket,
// against docs/protocols/speech-service.md sections 6, 7, 10 and 11 and the error rows of section 9 that touch them.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { readWav } from '../../src/audio/wav.js';
import { DEFAULT_PHRASE_DIR } from '../../src/sim/agent/phrases.js';
import { type LocalAgent, startLocalAgent } from '../../src/sim/agent/server.js';
import { refusedStatus } from './local-agent-client.js';

const PHRASES = JSON.parse(readFileSync(join(DEFAULT_PHRASE_DIR, 'phrases.json'), 'utf8')) as Record<
  string,
  string
>;
const GOODBYE_ULAW = readFileSync(join(DEFAULT_PHRASE_DIR, 'goodbye.ulaw'));
const AUTH = 'Token speak-key';

let agent: LocalAgent;
const sockets: WebSocket[] = [];

beforeEach(async () => {
  agent = await startLocalAgent({ port: 0, apiKeys: ['speak-key'] });
});

afterEach(async () => {
  for (const ws of sockets.splice(0)) ws.terminate();
  await agent.close();
});

async function speak(
  path: string,
  query: string,
  body: unknown = { text: 'Hello there' },
  auth: string | null = AUTH,
) {
  const res = await fetch(`${agent.httpUrl}${path}?${query}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(auth ? { authorization: auth } : {}) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const bytes = Buffer.from(await res.arrayBuffer());
  const isJson = (res.headers.get('content-type') ?? '').startsWith('application/json');
  return {
    status: res.status,
    type: res.headers.get('content-type'),
    bytes,
    json: isJson ? JSON.parse(bytes.toString()) : null,
  };
}

describe('POST /v1/speak (speech-service.md section 6)', () => {
  it('speaks a lyric- voice in the encoding asked for: a bundled phrase when the text is one', async () => {
    const answer = await speak('/v1/speak', 'model=lyric-2-andromeda-en&encoding=mulaw', {
      text: PHRASES.goodbye,
    });
    expect(answer.status).toBe(200);
    expect(answer.type).toBe('audio/basic');
    expect(answer.bytes).toEqual(GOODBYE_ULAW);
  });

  it('answers a WAV that names its rate with container=wav, and audio as long as the words otherwise', async () => {
    const wav = await speak('/v1/speak', 'encoding=linear16&container=wav', { text: 'A few words to say' });
    expect(wav.type).toBe('audio/wav');
    const parsed = readWav(wav.bytes);
    expect(parsed).toMatchObject({ sampleRate: 24_000, channels: 1, format: 'pcm16' });
    const short = await speak('/v1/speak', 'encoding=alaw', { text: 'Hi' });
    const long = await speak('/v1/speak', 'encoding=alaw', {
      text: 'This sentence has rather more words in it',
    });
    expect(long.bytes.length).toBeGreaterThan(short.bytes.length);
    // Deterministic: the same text, the same audio.
    expect((await speak('/v1/speak', 'encoding=alaw', { text: 'Hi' })).bytes).toEqual(short.bytes);
  });

  it('serves lyric- voices only; a turn- voice belongs to /v2/speak', async () => {
    const answer = await speak('/v1/speak', 'model=turn-kit-en&encoding=mulaw');
    expect(answer).toMatchObject({
      status: 400,
      json: { err_code: 'INVALID_QUERY_PARAMETER', err_msg: 'turn- voices are served on /v2/speak only' },
    });
  });

  it('takes speed 0.7 to 1.5 for lyric-2 English and Spanish voices only', async () => {
    expect((await speak('/v1/speak', 'model=lyric-2-andromeda-en&encoding=mulaw&speed=1.5')).status).toBe(
      200,
    );
    expect((await speak('/v1/speak', 'model=lyric-2-celeste-es&encoding=mulaw&speed=0.7')).status).toBe(200);
    for (const query of [
      'model=lyric-2-andromeda-en&encoding=mulaw&speed=1.6',
      'model=lyric-2-andromeda-en&encoding=mulaw&speed=fast',
      'model=lyric-1-asteria-en&encoding=mulaw&speed=1',
      'model=lyric-2-andromeda-fr&encoding=mulaw&speed=1',
    ]) {
      expect((await speak('/v1/speak', query)).json?.err_code).toBe('INVALID_QUERY_PARAMETER');
    }
  });

  it('400 for empty text (speech-service.md section 9), and for a body that is not {"text": …}', async () => {
    for (const body of [{ text: '' }, { text: '   ' }, {}, { text: 3 }, 'nope']) {
      expect((await speak('/v1/speak', 'encoding=mulaw', body)).status).toBe(400);
    }
  });

  it('refuses unknown encodings and parameters, answers 501 for the compressed ones it cannot render', async () => {
    expect((await speak('/v1/speak', 'encoding=wma')).json?.err_code).toBe('INVALID_QUERY_PARAMETER');
    expect((await speak('/v1/speak', 'encoding=mulaw&sample_rate=8000')).json?.err_msg).toMatch(
      /unknown parameter "sample_rate"/,
    );
    expect((await speak('/v1/speak', 'encoding=mulaw&container=ogg')).status).toBe(400);
    expect((await speak('/v1/speak', 'encoding=mp3')).status).toBe(501);
    expect((await speak('/v1/speak', 'encoding=mulaw', { text: 'x' }, null)).status).toBe(401);
    const get = await fetch(`${agent.httpUrl}/v1/speak`, { headers: { authorization: AUTH } });
    expect(get.status).toBe(405);
  });
});

describe('POST /v2/speak (speech-service.md section 7)', () => {
  it('speaks a turn- voice', async () => {
    const answer = await speak('/v2/speak', 'model=turn-kit-en&encoding=mulaw', { text: PHRASES.goodbye });
    expect(answer.status).toBe(200);
    expect(answer.bytes).toEqual(GOODBYE_ULAW);
    const wav = await speak('/v2/speak', 'model=turn-kit-en&encoding=mulaw&container=wav&priority=standard', {
      text: PHRASES.goodbye,
    });
    expect(readWav(wav.bytes)).toMatchObject({ sampleRate: 8000, format: 'mulaw' });
  });

  it('rejects a request without model, and one with a lyric- model', async () => {
    expect((await speak('/v2/speak', 'encoding=mulaw')).json).toEqual({
      err_code: 'INVALID_QUERY_PARAMETER',
      err_msg: 'model is required',
    });
    expect((await speak('/v2/speak', 'model=lyric-2-andromeda-en&encoding=mulaw')).json).toEqual({
      err_code: 'INVALID_QUERY_PARAMETER',
      err_msg: 'lyric- voices are served on /v1/speak only',
    });
    expect((await speak('/v2/speak', 'model=turn&encoding=mulaw')).status).toBe(400);
  });

  it('takes speed 0.5 to 1.5 in steps of 0.05 (speech-service.md section 10)', async () => {
    expect((await speak('/v2/speak', 'model=turn-kit-en&encoding=mulaw&speed=0.55')).status).toBe(200);
    expect((await speak('/v2/speak', 'model=turn-kit-en&encoding=mulaw&speed=0.52')).status).toBe(400);
    expect((await speak('/v2/speak', 'model=turn-kit-en&encoding=mulaw&speed=1.55')).status).toBe(400);
  });

  it('answers inline: a callback is not sent (501)', async () => {
    expect(
      (await speak('/v2/speak', 'model=turn-kit-en&encoding=mulaw&callback=https://example.com/cb')).status,
    ).toBe(501);
  });
});

/** Opens the streaming speak socket; resolves with it and every message it receives. */
async function stream(query: string) {
  const ws = new WebSocket(`${agent.url}/v2/speak?${query}`, { headers: { authorization: AUTH } });
  sockets.push(ws);
  const messages: Array<Record<string, unknown> | Buffer> = [];
  ws.on('message', (data, isBinary) => messages.push(isBinary ? (data as Buffer) : JSON.parse(String(data))));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  const json = () => messages.filter((m): m is Record<string, unknown> => !Buffer.isBuffer(m));
  return { ws, messages, json };
}

describe('WebSocket /v2/speak (speech-service.md sections 7 and 9)', () => {
  it('streams a turn: SpeechStarted, audio before any flush, Flushed, then SpeechMetadata', async () => {
    const { ws, messages, json } = await stream('model=turn-kit-en&encoding=mulaw');
    ws.send(JSON.stringify({ type: 'Speak', text: PHRASES.goodbye }));
    await expect.poll(() => messages.some(Buffer.isBuffer)).toBe(true);
    const started = json()[0]!;
    expect(started).toMatchObject({ type: 'SpeechStarted', speech_id: expect.any(String) });
    ws.send(JSON.stringify({ type: 'Flush' }));
    await expect
      .poll(() => json().map((m) => m.type))
      .toEqual(['SpeechStarted', 'Flushed', 'SpeechMetadata']);
    expect(json()[2]).toMatchObject({ speech_id: started.speech_id, characters: PHRASES.goodbye!.length });
    expect(Buffer.concat(messages.filter(Buffer.isBuffer))).toEqual(GOODBYE_ULAW);
  });

  it('strips markup with a warning, and interrupts a turn with what was spoken', async () => {
    const { ws, json } = await stream('model=turn-kit-en');
    ws.send(JSON.stringify({ type: 'Speak', text: 'Hello <break time="1s"/>there.' }));
    ws.send(JSON.stringify({ type: 'Speak', text: ' More.' }));
    ws.send(JSON.stringify({ type: 'Interrupt' }));
    await expect
      .poll(() => json().map((m) => m.type))
      .toEqual(['SpeechStarted', 'Warning', 'SpeechInterrupted']);
    expect(json()[1]).toMatchObject({ code: 'INPUT_MARKUP_STRIPPED' });
    expect(json()[2]).toMatchObject({ text_spoken: 'Hello there. More.', text_remaining: '' });
  });

  it('takes Configure for speed only', async () => {
    const { ws, json } = await stream('model=turn-kit-en&speed=1.2&expressivity=-1');
    ws.send(JSON.stringify({ type: 'Configure', speed: 0.8 }));
    ws.send(JSON.stringify({ type: 'Configure', speed: 0.81 }));
    ws.send(JSON.stringify({ type: 'Configure', speed: 1, voice: 'other' }));
    await expect.poll(() => json().length).toBe(2);
    expect(json().map((m) => m.code)).toEqual(['INVALID_CONFIGURE', 'INVALID_CONFIGURE']);
  });

  it('fails the connection on a batch-only or unknown parameter, a lyric- or missing model, a compressed encoding', async () => {
    for (const query of [
      'model=turn-kit-en&container=wav',
      'model=turn-kit-en&bit_rate=48000',
      'model=turn-kit-en&callback=https://example.com',
      'model=turn-kit-en&callback_method=POST',
      'model=turn-kit-en&priority=high',
      'model=turn-kit-en&encoding=mp3',
      'model=turn-kit-en&encoding=opus',
      'model=turn-kit-en&sample_rate=8000',
      'model=turn-kit-en&speeed=1',
      'model=turn-kit-en&speed=1.52',
      'model=turn-kit-en&expressivity=3',
      'model=lyric-2-andromeda-en',
      'encoding=mulaw',
    ]) {
      expect(await refusedStatus(agent.url, AUTH, `/v2/speak?${query}`), query).toBe(400);
    }
    expect(await refusedStatus(agent.url, 'Token wrong', '/v2/speak?model=turn-kit-en')).toBe(401);
  });
});
