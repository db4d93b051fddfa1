import { afterEach, describe, expect, it } from 'vitest';
import type { CallEvent } from '../../../../src/sim/carrier/events.js';
import { placeCall } from '../../../../src/sim/carrier/place-call.js';
import { AUTH_TOKEN, closeFakeServers, fakeServer, forgetFakeServers } from '../fake-server.js';

afterEach(closeFakeServers);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const types = (events: CallEvent[]) => events.map((e) => e.type);
const allBytes = (buf: Buffer, value: number) => buf.every((b) => b === value);

describe('the simulated carrier playing Twilio', () => {
  it('places a signed call, streams frames as Twilio does, and plays server audio like a phone', async () => {
    const timings: { markAEchoMs?: number } = {};
    const server = await fakeServer({
      observerToken: 'observer-token',
      async onStream(side) {
        await side.next((m) => m.event === 'start');
        server.publish({ type: 'transcript', role: 'assistant', content: 'Hello, thanks for calling.' });
        // 0.4 s of audio, then a mark: it must come back only once the audio has played.
        const sentA = performance.now();
        side.play(Buffer.alloc(3200, 0x11), 'a');
        await side.mark('a');
        timings.markAEchoMs = performance.now() - sentA;
        // 2 s of audio, cut short by a barge-in.
        side.play(Buffer.alloc(16000, 0x22), 'b');
        await sleep(300);
        server.publish({ type: 'barge-in' });
        side.send({ event: 'clear' });
        await side.mark('b');
        side.play(Buffer.alloc(1600, 0x33), 'c');
        await side.mark('c');
        server.publish({ type: 'transcript', role: 'user', content: 'Bye.', interrupted: false });
        server.publish({ type: 'function', name: 'end_call', outcome: 'ok' });
        server.publish({ type: 'end', reason: 'agent ended the call' });
        side.ws.close(1000, 'goodbye');
      },
    });
    const seen: CallEvent[] = [];
    const result = await placeCall({
      server: `${server.url}/`,
      audio: Buffer.alloc(1000, 0x55),
      env: { TWILIO_AUTH_TOKEN: AUTH_TOKEN },
      realtime: false,
      waitForGreeting: false,
      holdMs: 20_000,
      onEvent: (e) => seen.push(e),
    });
    await server.streamDone;

    // The voice webhook, as Twilio posts it.
    expect(server.webhooks).toHaveLength(1);
    const webhook = server.webhooks[0]!;
    expect(webhook.signatureValid).toBe(true);
    expect(webhook.params).toMatchObject({
      CallSid: result.callSid,
      From: '+15005550006',
      To: '+15005550001',
      CallStatus: 'ringing',
      Direction: 'inbound',
      ApiVersion: '2010-04-01',
    });
    expect(webhook.params.CallSid).toMatch(/^CA[0-9a-f]{32}$/);
    expect(webhook.params.AccountSid).toMatch(/^AC[0-9a-f]{32}$/);
    expect(server.upgrades).toEqual([{ path: '/media/twilio', signatureValid: true }]);

    // connected, then start carrying the TwiML parameters.
    const messages = server.streams[0]!.messages;
    expect(messages[0]).toEqual({ event: 'connected', protocol: 'Call', version: '1.0.0' });
    expect(messages[1]).toEqual({
      event: 'start',
      sequenceNumber: '1',
      streamSid: result.streamSid,
      start: {
        accountSid: webhook.params.AccountSid,
        streamSid: result.streamSid,
        callSid: result.callSid,
        tracks: ['inbound'],
        mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
        customParameters: { token: 'a&b', profile: 'orders' },
      },
    });
    expect(result.streamSid).toMatch(/^MZ[0-9a-f]{32}$/);

    // Every message after connected is numbered in order; media frames are whole 20 ms frames.
    messages.slice(1).forEach((m, i) => {
      expect(m.sequenceNumber).toBe(String(i + 1));
    });
    const media = messages.filter((m) => m.event === 'media');
    expect(media.length).toBeGreaterThanOrEqual(7);
    media.forEach((m, i) => {
      expect(m.streamSid).toBe(result.streamSid);
      expect(m.media).toMatchObject({ track: 'inbound', chunk: String(i + 1), timestamp: String(i * 20) });
      expect(Buffer.from(m.media.payload, 'base64')).toHaveLength(160);
    });
    const sent = Buffer.concat(media.map((m) => Buffer.from(m.media.payload, 'base64')));
    expect(sent.subarray(0, 1000)).toEqual(Buffer.alloc(1000, 0x55));
    // The last caller frame is padded with silence, and silence keeps flowing while the caller holds.
    expect(allBytes(sent.subarray(1000), 0xff)).toBe(true);

    // Marks went back in order; b was released by the clear.
    const echoes = messages.filter((m) => m.event === 'mark');
    expect(echoes.map((m) => m.mark.name)).toEqual(['a', 'b', 'c']);
    expect(echoes[0]).toMatchObject({ streamSid: result.streamSid, sequenceNumber: expect.any(String) });
    // 0.4 s of audio cannot have played sooner (a lower bound, so not timing-sensitive).
    expect(timings.markAEchoMs).toBeGreaterThanOrEqual(300);

    // What the caller heard: all of a, the part of b before the clear, all of c, nothing else.
    const heard = result.heard;
    expect(heard.subarray(0, 3200)).toEqual(Buffer.alloc(3200, 0x11));
    expect(heard.subarray(heard.length - 1600)).toEqual(Buffer.alloc(1600, 0x33));
    const partOfB = heard.subarray(3200, heard.length - 1600);
    expect(partOfB.length).toBeGreaterThan(0);
    expect(partOfB.length).toBeLessThan(16000);
    expect(allBytes(partOfB, 0x22)).toBe(true);

    expect(result.ok).toBe(true);
    expect(result.endReason).toBe('server-hangup');
    expect(result.events).toEqual(seen);
    const flushed = result.events.filter((e) => e.type === 'mark-echoed').map((e) => [e.name, e.flushed]);
    expect(flushed).toEqual([
      ['a', false],
      ['b', true],
      ['c', false],
    ]);
    const eventTypes = types(result.events);
    expect(eventTypes[0]).toBe('stream-started');
    expect(result.events[1]).toMatchObject({ type: 'caller-started-speaking', reason: 'no-wait' });
    expect(eventTypes).toContain('caller-audio-done');
    expect(eventTypes.filter((t) => t === 'agent-audio-started')).toHaveLength(3);
    expect(eventTypes.filter((t) => t === 'agent-audio-stopped')).toHaveLength(3);
    const clear = result.events.find((e) => e.type === 'clear');
    expect(clear).toMatchObject({ droppedMs: expect.any(Number) });
    expect(eventTypes.indexOf('clear')).toBeLessThan(eventTypes.lastIndexOf('mark-echoed'));
    expect(result.events.find((e) => e.type === 'hangup')).toMatchObject({ code: 1000, reason: 'goodbye' });
    expect(result.events.filter((e) => e.type === 'transcript')).toMatchObject([
      { role: 'assistant', content: 'Hello, thanks for calling.', interrupted: false },
      { role: 'user', content: 'Bye.', interrupted: false },
    ]);
    expect(eventTypes).toContain('barge-in');
    expect(result.events.find((e) => e.type === 'function')).toMatchObject({
      name: 'end_call',
      outcome: 'ok',
    });
    expect(result.events.find((e) => e.type === 'end')).toMatchObject({ reason: 'agent ended the call' });
    expect(eventTypes).not.toContain('warning');
    result.events.forEach((e, i) => {
      expect(e.atMs).toBeGreaterThanOrEqual(i === 0 ? 0 : result.events[i - 1]!.atMs);
    });
  });

  it('hangs up after holding the line, paced in real time, and drops a query string from the stream url', async () => {
    const server = await fakeServer({
      twiml: (wsUrl) => `<Response><Connect><Stream url="${wsUrl}?leak=1"/></Connect></Response>`,
      async onStream(side) {
        await side.next((m) => m.event === 'start');
        side.play(Buffer.alloc(800, 0x44), 'greeting');
      },
    });
    const result = await placeCall({
      server: server.url,
      from: '+442071838750',
      to: '+15005550009',
      audio: Buffer.alloc(160 * 5, 0x66),
      env: { TWILIO_AUTH_TOKEN: AUTH_TOKEN },
      waitForGreeting: false,
      holdMs: 200,
    });
    const side = server.streams[0]!;
    const closed = await side.closed;

    expect(server.upgrades).toEqual([{ path: '/media/twilio', signatureValid: true }]);
    expect(server.webhooks[0]!.params).toMatchObject({ From: '+442071838750', To: '+15005550009' });
    expect(result).toMatchObject({ ok: true, endReason: 'caller-hangup' });
    expect(result.heard).toEqual(Buffer.alloc(800, 0x44));
    // Five frames of speech, then ten of held silence, one every 20 ms.
    expect(result.durationMs).toBeGreaterThanOrEqual(290);
    const media = side.messages.filter((m) => m.event === 'media');
    expect(media).toHaveLength(15);
    const stop = side.messages.at(-1);
    expect(stop).toEqual({
      event: 'stop',
      sequenceNumber: String(side.messages.length - 1),
      streamSid: result.streamSid,
      stop: { accountSid: server.webhooks[0]!.params.AccountSid, callSid: result.callSid },
    });
    expect(closed.code).toBe(1000);
    expect(result.events.filter((e) => e.type === 'warning')).toMatchObject([
      { message: expect.stringMatching(/query string/) },
    ]);
    expect(types(result.events)).not.toContain('hangup');
  });

  it('reports a declined call (Say then Hangup) as failed, with what was said', async () => {
    const server = await fakeServer({
      twiml: () => '<Response><Say>Sorry, this number is not in service.</Say><Hangup/></Response>',
    });
    const result = await placeCall({
      server: server.url,
      audio: Buffer.alloc(160),
      env: { TWILIO_AUTH_TOKEN: AUTH_TOKEN },
    });
    expect(result.ok).toBe(false);
    expect(result.endReason).toMatch(/^declined: .*"Sorry, this number is not in service\."/);
    expect(result.events).toMatchObject([{ type: 'declined', say: 'Sorry, this number is not in service.' }]);
    expect(server.streams).toHaveLength(0);
  });

  it('fails clearly when the webhook refuses the signature', async () => {
    const server = await fakeServer();
    const result = await placeCall({
      server: server.url,
      audio: Buffer.alloc(160),
      env: { TWILIO_AUTH_TOKEN: 'wrong-token' },
    });
    expect(result).toMatchObject({
      ok: false,
      endReason: 'webhook-failed: voice webhook answered HTTP 403: signature mismatch',
      heard: Buffer.alloc(0),
    });
  });

  it('fails clearly when nothing answers', async () => {
    const server = await fakeServer();
    const url = server.url;
    await server.close();
    forgetFakeServers();
    const result = await placeCall({ server: url, audio: Buffer.alloc(160) });
    expect(result.ok).toBe(false);
    expect(result.endReason).toMatch(/^webhook-failed: voice webhook .* unreachable: ECONNREFUSED/);
  });

  it('fails when the server closes the stream with an error code, carrying on without a refused feed', async () => {
    const server = await fakeServer({
      unverified: true,
      async onStream(side) {
        await side.next((m) => m.event === 'start');
        side.play(Buffer.alloc(320, 0x12), 'm');
        await side.mark('m');
        side.ws.close(1011, 'agent unavailable');
      },
    });
    const result = await placeCall({
      server: server.url,
      audio: Buffer.alloc(160),
      realtime: false,
      holdMs: 10_000,
    });
    // Without an auth token the call goes out unsigned.
    expect(server.webhooks[0]).toMatchObject({ signed: false });
    expect(result.ok).toBe(false);
    expect(result.endReason).toBe('server-error: close code 1011 (agent unavailable)');
    expect(result.heard).toEqual(Buffer.alloc(320, 0x12));
    expect(result.events.find((e) => e.type === 'hangup')).toMatchObject({ code: 1011, unplayedMs: 0 });
    expect(types(result.events)).not.toContain('warning');
  });

  it('fails when the caller heard nothing, and reports server frames Twilio would ignore', async () => {
    const server = await fakeServer({
      async onStream(side) {
        await side.next((m) => m.event === 'start');
        side.ws.send(JSON.stringify({ event: 'media', streamSid: 'MZwrong', media: { payload: 'AAAA' } }));
        side.ws.send('not json');
        side.send({ event: 'dance' });
        side.ws.close(1000);
      },
    });
    const result = await placeCall({
      server: server.url,
      audio: Buffer.alloc(160),
      env: { TWILIO_AUTH_TOKEN: AUTH_TOKEN },
      realtime: false,
    });
    expect(result).toMatchObject({ ok: false, endReason: 'server-hangup' });
    expect(result.heard).toHaveLength(0);
    const warnings = result.events.filter((e) => e.type === 'warning').map((e) => e.message);
    expect(warnings).toEqual([
      expect.stringMatching(/without this stream's streamSid/),
      expect.stringMatching(/not a JSON object/),
      expect.stringMatching(/unknown event "dance"/),
    ]);
  });
});
