// Secrets never reach a log line, and every line about a call carries its CallSid.
import { Writable } from 'node:stream';
import pino from 'pino';
import twilio from 'twilio';
import { afterEach, describe, expect, it } from 'vitest';
import { loggerOptions } from '../../src/log.js';
import { type FakeAgent, startFakeAgent } from '../helpers/fake-agent.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { newCallSid, openMediaStream, voiceWebhook } from '../helpers/twilio-carrier.js';

function sink() {
  const lines: Array<Record<string, unknown>> = [];
  let raw = '';
  const stream = new Writable({
    write(chunk, _enc, done) {
      raw += chunk.toString();
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { stream, lines, raw: () => raw };
}

let agent: FakeAgent | undefined;
let server: TestServer | undefined;

afterEach(async () => {
  await server?.close();
  await agent?.close();
});

describe('logs', () => {
  it('redact secret fields wherever they appear', () => {
    const out = sink();
    const logger = pino(loggerOptions('info'), out.stream);
    logger.info(
      {
        req: { headers: { authorization: 'Token s3cret-key', 'x-twilio-signature': 'sig' } },
        agent: { apiKey: 's3cret-key' },
        customParameters: { token: 'v1.stream-token' },
      },
      'hello',
    );
    expect(out.raw()).not.toMatch(/s3cret-key|stream-token|"sig"/);
    expect(out.raw()).toContain('[redacted]');
  });

  it('carry no API key, auth token or stream token through a whole call, and tag call lines with the CallSid', async () => {
    const apiKey = 'agent-api-key-which-must-stay-secret';
    const authToken = 'twilio-auth-token-which-must-stay-secret';
    const out = sink();
    agent = await startFakeAgent();
    server = await startServer(
      {
        AGENT_URL: agent.url,
        AGENT_API_KEY: apiKey,
        TWILIO_ACCOUNT_SID: `AC${'b'.repeat(32)}`,
        TWILIO_AUTH_TOKEN: authToken,
        PUBLIC_URL: 'http://127.0.0.1:1',
        LOG_LEVEL: 'trace',
      },
      { logger: pino(loggerOptions('trace'), out.stream) },
    );
    const callSid = newCallSid();
    const answer = await voiceWebhook(
      server.baseUrl,
      { CallSid: callSid, From: '+15005550006', To: '+15005550001' },
      { authToken, publicUrl: 'http://127.0.0.1:1' },
    );
    expect(answer.status).toBe(200);
    // A forged webhook is refused: the refusal is logged, the secrets are not.
    const bad = await voiceWebhook(server.baseUrl, { CallSid: callSid }, { signature: 'forged' });
    expect(bad.status).toBe(403);

    const carrier = await openMediaStream(
      answer.streamUrl.replace('127.0.0.1:1', new URL(server.baseUrl).host),
      {
        callSid,
        headers: { 'x-twilio-signature': twilio.getExpectedTwilioSignature(authToken, answer.streamUrl, {}) },
      },
    );
    carrier.start(answer.parameters);
    const conn = await agent.nextConnection();
    conn.send({ type: 'SettingsApplied' });
    conn.send({ type: 'ConversationText', role: 'assistant', content: 'Hello there' });
    conn.send({ type: 'Error', code: 'INVALID_SETTINGS', description: 'bye' });
    await carrier.closed;
    await new Promise((r) => setTimeout(r, 50));

    const raw = out.raw();
    expect(raw).not.toContain(apiKey);
    expect(raw).not.toContain(authToken);
    expect(raw).not.toContain(answer.parameters.token);
    const ended = out.lines.find((l) => l.msg === 'call ended');
    expect(ended).toMatchObject({ callSid, streamSid: carrier.streamSid, call: { reason: 'agent_error' } });
    const turn = out.lines.find((l) => l.msg === 'conversation');
    expect(turn).toMatchObject({ callSid, turn: { role: 'assistant', chars: 'Hello there'.length } });
  });
});

describe('transcripts in logs', () => {
  /** One call in which both sides speak and the caller keys digits, logged through `options`. */
  async function callLoggedWith(options: ReturnType<typeof loggerOptions>) {
    const out = sink();
    agent = await startFakeAgent();
    server = await startServer(
      { AGENT_URL: agent.url, AGENT_API_KEY: 'key' },
      { logger: pino(options, out.stream) },
    );
    const callSid = newCallSid();
    const answer = await voiceWebhook(server.baseUrl, {
      CallSid: callSid,
      From: '+15005550006',
      To: '+15005550001',
    });
    const carrier = await openMediaStream(answer.streamUrl, { callSid });
    carrier.start(answer.parameters);
    const conn = await agent.nextConnection();
    conn.send({ type: 'SettingsApplied' });
    conn.send({ type: 'ConversationText', role: 'user', content: 'My account number is seven seven one' });
    conn.send({
      type: 'ConversationText',
      role: 'assistant',
      content: 'Thanks, checking account seven seven one',
    });
    for (const digit of ['4', '2', '9', '#']) carrier.dtmf(digit);
    await conn.waitFor('InjectUserMessage');
    carrier.stop();
    await carrier.closed;
    await until(() => out.lines.some((l) => l.msg === 'call ended'));
    return out;
  }

  const until = async (predicate: () => boolean) => {
    while (!predicate()) await new Promise((r) => setTimeout(r, 10));
  };

  it('keeps what was said and the keys pressed out of a default log', async () => {
    // Invariant: unless the operator turns LOG_TRANSCRIPTS on, no log line holds what a caller said or keyed.
    const out = await callLoggedWith(loggerOptions('info'));
    const raw = out.raw();
    expect(raw).not.toContain('seven seven one');
    expect(raw).not.toContain('"transcript"');
    expect(raw).not.toContain('"dtmf"');
    expect(raw).not.toContain('4 2 9');
    const turns = out.lines.filter((l) => l.msg === 'conversation');
    expect(turns.map((l) => l.turn)).toEqual([
      { role: 'user', chars: 36 },
      { role: 'assistant', chars: 40 },
    ]);
    expect(out.lines.find((l) => l.msg === 'caller entered digits')).toMatchObject({ keys: 3 });
  });

  it('logs them under `transcript` and `dtmf` when the operator turns them on', async () => {
    const out = await callLoggedWith(loggerOptions('info', { transcripts: true }));
    const turns = out.lines.filter((l) => l.msg === 'conversation');
    expect(turns.map((l) => l.transcript)).toEqual([
      { role: 'user', content: 'My account number is seven seven one' },
      { role: 'assistant', content: 'Thanks, checking account seven seven one' },
    ]);
    expect(out.lines.find((l) => l.msg === 'caller entered digits')).toMatchObject({ dtmf: '429' });
  });

  it('drops only the conversation keys, from child loggers too, and keeps the rest of the line', () => {
    const out = sink();
    const logger = pino(loggerOptions('debug'), out.stream).child({ callSid: 'CA1' });
    logger.debug({ transcript: 'private words', dtmf: '1234', turn: { role: 'user' } }, 'turn');
    logger.info('plain line');
    expect(out.lines[0]).toMatchObject({ callSid: 'CA1', msg: 'turn', turn: { role: 'user' } });
    expect(out.lines[0]).not.toHaveProperty('transcript');
    expect(out.lines[0]).not.toHaveProperty('dtmf');
    expect(out.lines[1]).toMatchObject({ callSid: 'CA1', msg: 'plain line' });
  });
});
