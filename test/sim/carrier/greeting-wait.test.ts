import { afterEach, describe, expect, it } from 'vitest';
import type { CallEvent } from '../../../src/sim/carrier/events.js';
import { GreetingWait } from '../../../src/sim/carrier/greeting-wait.js';
import { placeCall } from '../../../src/sim/carrier/place-call.js';
import { AUTH_TOKEN, closeFakeServers, fakeServer, type Message } from './fake-server.js';

afterEach(closeFakeServers);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const types = (events: CallEvent[]) => events.map((e) => e.type);
const CALLER_BYTE = 0x66;
const SILENCE_BYTE = 0xff;

/** The caller's media frames as the server received them, one payload per 20 ms frame. */
function mediaFrames(messages: Message[]): Buffer[] {
  return messages
    .filter((m) => m.event === 'media')
    .map((m) => Buffer.from(m.media.payload as string, 'base64'));
}

/** Frames of silence the caller sent before the first frame of their own audio. */
function silentFramesBeforeSpeech(frames: Buffer[]): number {
  const first = frames.findIndex((frame) => frame.every((b) => b === CALLER_BYTE));
  expect(first).toBeGreaterThanOrEqual(0);
  for (const frame of frames.slice(0, first)) expect(frame.every((b) => b === SILENCE_BYTE)).toBe(true);
  return first;
}

describe('GreetingWait', () => {
  it('waits for the greeting to start, play and fall quiet for the idle time', () => {
    const wait = new GreetingWait();
    expect(wait.decide(0)).toBeUndefined();
    wait.agentAudioStarted(100);
    expect(wait.decide(3000)).toBeUndefined();
    wait.agentAudioStopped(3000);
    expect(wait.decide(3280)).toBeUndefined();
    expect(wait.decide(3300)).toBe('greeting-ended');
  });

  it('keeps listening through a pause shorter than the idle time', () => {
    const wait = new GreetingWait();
    wait.agentAudioStarted(0);
    wait.agentAudioStopped(1000);
    expect(wait.decide(1200)).toBeUndefined();
    wait.agentAudioStarted(1200);
    expect(wait.decide(1600)).toBeUndefined();
    wait.agentAudioStopped(2000);
    expect(wait.decide(2300)).toBe('greeting-ended');
  });

  it('speaks up when no agent audio comes, and over a greeting that runs past the cap', () => {
    const silent = new GreetingWait();
    expect(silent.decide(4980)).toBeUndefined();
    expect(silent.decide(5000)).toBe('no-greeting');

    const long = new GreetingWait({ maxWaitMs: 2000 });
    long.agentAudioStarted(40);
    expect(long.decide(1980)).toBeUndefined();
    expect(long.decide(2000)).toBe('wait-capped');
  });
});

describe('placeCall waits for the greeting', () => {
  it('sends silence frames while the greeting plays and for 300 ms after, then the caller audio', async () => {
    const server = await fakeServer({
      async onStream(side) {
        await side.next((m) => m.event === 'start');
        // A 0.4 s greeting.
        side.play(Buffer.alloc(3200, 0x11), 'greeting');
      },
    });
    const result = await placeCall({
      server: server.url,
      audio: Buffer.alloc(160 * 5, CALLER_BYTE),
      env: { TWILIO_AUTH_TOKEN: AUTH_TOKEN },
      holdMs: 100,
    });
    expect(result).toMatchObject({ ok: true, endReason: 'caller-hangup' });
    expect(result.heard).toEqual(Buffer.alloc(3200, 0x11));

    const frames = mediaFrames(server.streams[0]!.messages);
    // 20 frames of greeting and 15 of quiet at least; a little more while the greeting was on its way.
    const waited = silentFramesBeforeSpeech(frames);
    expect(waited).toBeGreaterThanOrEqual(35);
    expect(waited).toBeLessThan(35 + 50);
    // The line never went without frames: silence, the caller's five frames, five held frames.
    expect(frames).toHaveLength(waited + 5 + 5);
    expect(frames.slice(waited, waited + 5).every((f) => f.every((b) => b === CALLER_BYTE))).toBe(true);

    const eventTypes = types(result.events);
    expect(eventTypes).toEqual([
      'stream-started',
      'agent-audio-started',
      'mark-echoed',
      'agent-audio-stopped',
      'caller-started-speaking',
      'caller-audio-done',
    ]);
    const stopped = result.events.find((e) => e.type === 'agent-audio-stopped')!;
    const speaking = result.events.find((e) => e.type === 'caller-started-speaking')!;
    expect(speaking).toMatchObject({ reason: 'greeting-ended' });
    expect(speaking.atMs - stopped.atMs).toBeGreaterThanOrEqual(250);
  });

  it('hears a greeting out through a short pause between its parts', async () => {
    const server = await fakeServer({
      async onStream(side) {
        await side.next((m) => m.event === 'start');
        side.play(Buffer.alloc(1600, 0x11), 'part-1');
        await side.mark('part-1');
        await sleep(100);
        side.play(Buffer.alloc(1600, 0x12), 'part-2');
      },
    });
    const result = await placeCall({
      server: server.url,
      audio: Buffer.alloc(160, CALLER_BYTE),
      env: { TWILIO_AUTH_TOKEN: AUTH_TOKEN },
      holdMs: 40,
    });
    expect(result.heard).toEqual(Buffer.concat([Buffer.alloc(1600, 0x11), Buffer.alloc(1600, 0x12)]));
    const eventTypes = types(result.events);
    // Both parts played before the caller's turn.
    expect(eventTypes.filter((t) => t === 'agent-audio-stopped')).toHaveLength(2);
    expect(eventTypes.indexOf('caller-started-speaking')).toBeGreaterThan(
      eventTypes.lastIndexOf('agent-audio-stopped'),
    );
  });

  it('speaks up after the no-greeting cap when the agent says nothing', async () => {
    const server = await fakeServer();
    const result = await placeCall({
      server: server.url,
      audio: Buffer.alloc(160 * 2, CALLER_BYTE),
      env: { TWILIO_AUTH_TOKEN: AUTH_TOKEN },
      holdMs: 40,
      greetingWait: { noGreetingMs: 200 },
    });
    const frames = mediaFrames(server.streams[0]!.messages);
    // Frames 0 to 9 cover the first 200 ms of stream time; frame 10 is the caller's first.
    expect(silentFramesBeforeSpeech(frames)).toBe(10);
    expect(result.events.find((e) => e.type === 'caller-started-speaking')).toMatchObject({
      reason: 'no-greeting',
      atMs: expect.any(Number),
    });
    // The call itself fails: the caller heard nothing, which the wait must not hide.
    expect(result.ok).toBe(false);
  });

  it('speaks over a greeting that runs past the total cap', async () => {
    const server = await fakeServer({
      async onStream(side) {
        await side.next((m) => m.event === 'start');
        side.play(Buffer.alloc(16000, 0x11), 'long-greeting');
      },
    });
    const result = await placeCall({
      server: server.url,
      audio: Buffer.alloc(160, CALLER_BYTE),
      env: { TWILIO_AUTH_TOKEN: AUTH_TOKEN },
      holdMs: 40,
      greetingWait: { maxWaitMs: 300 },
    });
    const frames = mediaFrames(server.streams[0]!.messages);
    expect(silentFramesBeforeSpeech(frames)).toBe(15);
    const eventTypes = types(result.events);
    expect(result.events.find((e) => e.type === 'caller-started-speaking')).toMatchObject({
      reason: 'wait-capped',
    });
    // The greeting was still playing when the caller spoke.
    expect(eventTypes.indexOf('caller-started-speaking')).toBeLessThan(
      eventTypes.indexOf('agent-audio-stopped'),
    );
  });

  it('speaks at once with waitForGreeting false', async () => {
    const server = await fakeServer({
      async onStream(side) {
        await side.next((m) => m.event === 'start');
        side.play(Buffer.alloc(3200, 0x11), 'greeting');
      },
    });
    const result = await placeCall({
      server: server.url,
      audio: Buffer.alloc(160, CALLER_BYTE),
      env: { TWILIO_AUTH_TOKEN: AUTH_TOKEN },
      holdMs: 40,
      waitForGreeting: false,
    });
    expect(silentFramesBeforeSpeech(mediaFrames(server.streams[0]!.messages))).toBe(0);
    expect(result.events[1]).toMatchObject({ type: 'caller-started-speaking', reason: 'no-wait' });
  });
});
