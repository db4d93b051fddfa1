// Every carrier holds a conversation the same way: for each fixture (test/carriers/fixtures/), a
// call announced exactly as that carrier announces it, over real sockets, against a scripted fake
// agent and a fake of the carrier's REST API. Bytes pass untouched both ways in the carrier's own
// format; nothing reaches the agent before SettingsApplied; a barge-in clears the carrier's buffer
// and stops the interrupted reply; marks decide what the caller heard; DTMF reaches the agent;
// end_call and transfer go through the carrier's API only once the last words were heard (a carrier
// with no hang-up call, Exotel, has its stream closed instead); either side can end the call; and
// unsigned, forged, expired or replayed requests and streams are refused before any agent is
// dialed. Audio is cut as the carrier plays it without gaps (one frame a message for Vonage).
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { bytesPerMs } from '../../src/audio/format.js';
import type { CallRecord } from '../../src/store/call-record.js';
import { writeConfigDir } from '../helpers/config-dir.js';
import type { FakeCarrierApi } from './fixtures/fake-api.js';
import { type AgentConnection, type FakeAgent, startFakeAgent } from '../helpers/fake-agent.js';
import { startServer, type TestServer } from '../helpers/server.js';
import type {
  Announcement,
  CarrierFixture,
  FixtureContext,
  FixtureStream,
  StreamOptions,
} from './fixtures/fixture.js';
import { CARRIER_FIXTURES } from './fixtures/index.js';

const CALL = { from: '+15005550006', to: '+15005550001' };
const TRANSFER_TARGET = '+15550199';

const PROFILE = {
  prompt: 'You are a conformance test agent.',
  greeting: 'Hello from the conformance test.',
  think: { provider: { type: 'open_ai', model: 'gpt-4o-mini' } },
  endCall: true,
  transfer: { allow: [TRANSFER_TARGET] },
  dtmf: { enabled: true, interDigitTimeoutMs: 5000, terminator: '#', maxDigits: 12 },
  limits: { silencePromptMs: 0, silenceHangupMs: 0, maxCallMs: 0 },
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(CARRIER_FIXTURES.map((fixture) => [fixture.name, fixture] as const))(
  '%s',
  (_name, fixture: CarrierFixture) => {
    let agent: FakeAgent | undefined;
    let api: FakeCarrierApi | undefined;
    let server: TestServer | undefined;
    const streams: FixtureStream[] = [];
    const ms = (duration: number) => Math.round(bytesPerMs(fixture.format) * duration);
    const frames = (count: number) => Array.from({ length: count }, () => randomBytes(fixture.frameBytes));
    const toCaller = (agentBytes: Buffer) => fixture.expectedAtCaller?.(agentBytes) ?? agentBytes;

    afterEach(async () => {
      for (const stream of streams.splice(0)) stream.terminate();
      await server?.close();
      await agent?.close();
      await api?.close();
      server = agent = api = undefined;
    });

    async function start(env: Record<string, string> = {}): Promise<FixtureContext> {
      agent = await startFakeAgent();
      api = await fixture.startApi();
      server = await startServer(
        {
          AGENT_URL: agent.url,
          AGENT_API_KEY: 'conformance-agent-key',
          // The stream dials the agent itself, so every connection below is one the stream made.
          AGENT_PREWARM: 'false',
          CONFIG_DIR: writeConfigDir({ default: PROFILE }),
          ...fixture.env(api.url),
          ...env,
        },
        { carriers: (config, deps) => [fixture.adapter(config, deps)] },
      );
      return { baseUrl: server.baseUrl, api };
    }

    async function announced(ctx: FixtureContext): Promise<Announcement & { accepted: true }> {
      const announcement = await fixture.announce(ctx, CALL);
      if (!announcement.accepted) {
        throw new Error(`the call was not accepted: HTTP ${announcement.status} ${announcement.body}`);
      }
      return announcement;
    }

    async function open(ctx: FixtureContext, call: Announcement & { accepted: true }, opts?: StreamOptions) {
      const upgrade = await fixture.openStream(ctx, call, opts);
      if (!upgrade.opened) throw new Error(`the media upgrade was refused with HTTP ${upgrade.status}`);
      streams.push(upgrade.stream);
      return upgrade.stream;
    }

    /** A call up to the agent's Settings; SettingsApplied is the test's to send. */
    async function connect(opts: StreamOptions & { env?: Record<string, string> } = {}) {
      const ctx = await start(opts.env);
      const call = await announced(ctx);
      const stream = await open(ctx, call, opts);
      stream.start();
      const conn = await agent!.nextConnection();
      const settings = await conn.waitFor('Settings');
      return { ctx, call, stream, conn, settings };
    }

    function speak(conn: AgentConnection, audio: Buffer, text?: string): void {
      conn.send({ type: 'AgentStartedSpeaking', total_latency: 0.4, tts_latency: 0.1, ttt_latency: 0.3 });
      if (text) conn.send({ type: 'ConversationText', role: 'assistant', content: text });
      conn.sendAudio(audio);
      conn.send({ type: 'AgentAudioDone' });
    }

    function callFunction(conn: AgentConnection, name: string, args: Record<string, unknown>) {
      conn.send({
        type: 'FunctionCallRequest',
        functions: [{ id: 'fc_1', name, arguments: JSON.stringify(args), client_side: true }],
      });
    }

    async function functionAnswer(conn: AgentConnection) {
      const response = await conn.waitFor('FunctionCallResponse');
      return JSON.parse(String(response.content)) as Record<string, unknown>;
    }

    async function record(callSid: string): Promise<CallRecord> {
      await expect.poll(() => server!.store.getCallRecord(callSid), { timeout: 5_000 }).toBeTruthy();
      return (await server!.store.getCallRecord(callSid))!;
    }

    describe('audio', () => {
      it("configures the agent for the carrier's own format, so no byte is transcoded", async () => {
        const { settings } = await connect();
        const encoding = fixture.format.encoding;
        expect(settings.audio).toEqual({
          input: { encoding, sample_rate: fixture.format.sampleRate },
          output: { encoding, sample_rate: fixture.format.sampleRate, container: 'none' },
        });
      });

      it('sends the agent nothing before SettingsApplied, then every caller byte in order', async () => {
        const { stream, conn } = await connect();
        const early = frames(10);
        for (const frame of early) stream.sendAudio(frame);
        await sleep(150);
        expect(conn.audio).toHaveLength(0);
        conn.send({ type: 'SettingsApplied' });
        const late = frames(5);
        for (const frame of late) stream.sendAudio(frame);
        const expected = Buffer.concat([...early, ...late]);
        expect((await conn.waitForAudio(expected.length)).equals(expected)).toBe(true);
        const firstAudio = conn.log.findIndex((entry) => entry.kind === 'audio');
        expect(
          conn.log.slice(0, firstAudio).map((e) => (e.kind === 'text' ? e.message.type : 'audio')),
        ).toEqual(['Settings']);
      });

      it('plays the agent audio to the caller byte for byte', async () => {
        const { stream, conn } = await connect();
        conn.send({ type: 'SettingsApplied' });
        // Five whole frames, cut unevenly as an agent streams them.
        const reply = randomBytes(fixture.frameBytes * 5);
        conn.send({ type: 'AgentStartedSpeaking', total_latency: 0.4, tts_latency: 0.1, ttt_latency: 0.3 });
        for (const [from, to] of [
          [0, 7],
          [7, fixture.frameBytes * 3 + 1],
          [fixture.frameBytes * 3 + 1, reply.length],
        ] as const) {
          conn.sendAudio(reply.subarray(from, to));
        }
        conn.send({ type: 'AgentAudioDone' });
        const expected = toCaller(reply);
        const heard = await stream.waitForAudio(expected.length);
        expect(heard.subarray(0, expected.length).equals(expected)).toBe(true);
        // Cut as the carrier plays it without gaps (one frame a message for Vonage, Exotel's chunks).
        const sizes = stream.events.flatMap((event) =>
          event.type === 'audio' ? [event.payload.length] : [],
        );
        const rule = fixture.audioMessages ?? { multipleOf: fixture.frameBytes, min: 1, max: Infinity };
        for (const size of sizes) {
          expect(size % rule.multipleOf).toBe(0);
          expect(size).toBeGreaterThanOrEqual(rule.min);
          expect(size).toBeLessThanOrEqual(rule.max);
        }
      });
    });

    describe('barge-in', () => {
      it("sends the carrier's clear at once and plays no more of the interrupted reply", async () => {
        const { stream, conn } = await connect();
        conn.send({ type: 'SettingsApplied' });
        conn.send({ type: 'AgentStartedSpeaking', total_latency: 0.4, tts_latency: 0.1, ttt_latency: 0.3 });
        const reply = randomBytes(ms(1000));
        conn.sendAudio(reply);
        await stream.waitForAudio(toCaller(reply).length);
        conn.send({ type: 'UserStartedSpeaking' });
        await stream.waitFor((event) => event.type === 'clear');
        // The rest of the interrupted reply, still in flight from the agent, must not play.
        conn.sendAudio(randomBytes(ms(200)));
        conn.send({ type: 'AgentAudioDone' });
        // The next reply plays again.
        const next = randomBytes(fixture.frameBytes * 2);
        speak(conn, next);
        const expected = Buffer.concat([toCaller(reply), toCaller(next)]);
        const heard = await stream.waitForAudio(expected.length);
        expect(heard.subarray(0, expected.length).equals(expected)).toBe(true);
      });
    });

    describe('marks', () => {
      it('decide what the caller heard of an interrupted reply', async () => {
        const { call, stream, conn } = await connect({ echoMarks: false });
        conn.send({ type: 'SettingsApplied' });
        const text = 'one two three four five six seven eight nine ten';
        conn.send({ type: 'AgentStartedSpeaking', total_latency: 0.4, tts_latency: 0.1, ttt_latency: 0.3 });
        conn.send({ type: 'ConversationText', role: 'assistant', content: text });
        // Two seconds of reply, in the 100 ms chunks an agent streams.
        for (let i = 0; i < 20; i++) conn.sendAudio(randomBytes(ms(100)));
        await stream.waitForAudio(ms(2000));
        await stream.waitFor((event) => event.type === 'mark');
        // The caller heard up to the first mark, then interrupted.
        const [first] = stream.marks();
        stream.echoMark(first!);
        await sleep(100);
        conn.send({ type: 'UserStartedSpeaking' });
        await stream.waitFor((event) => event.type === 'clear');
        // Flushed by the clear, so not heard.
        for (const name of stream.marks().slice(1)) stream.echoMark(name);
        stream.hangUp();
        await stream.closed;
        const turn = (await record(call.callSid)).turns.find((t) => t.role === 'assistant')!;
        expect(turn.interrupted).toBe(true);
        expect(turn.generated).toBe(text);
        expect(turn.heardMs).toBeGreaterThan(0);
        expect(turn.heardMs).toBeLessThan(2000);
        expect(text.startsWith(turn.content)).toBe(true);
        expect(turn.content.length).toBeLessThan(text.length);
      });
    });

    describe('DTMF', () => {
      it("passes the caller's keys to the agent as one entry", async () => {
        const { stream, conn } = await connect();
        conn.send({ type: 'SettingsApplied' });
        for (const digit of ['1', '2', '3', '#']) stream.dtmf(digit);
        const injected = await conn.waitFor('InjectUserMessage');
        expect(injected.content).toBe('The caller entered 1 2 3');
      });
    });

    describe('call control', () => {
      it("ends the call only once the goodbye was heard: by the carrier's API, or by closing the stream where it has none", async () => {
        const { call, stream, conn } = await connect({ echoMarks: false });
        conn.send({ type: 'SettingsApplied' });
        callFunction(conn, 'end_call', {});
        expect((await functionAnswer(conn)).ok).toBe(true);
        const goodbye = randomBytes(ms(500));
        speak(conn, goodbye, 'Goodbye!');
        await stream.waitForAudio(toCaller(goodbye).length);
        await stream.waitFor((event) => event.type === 'mark');
        // Sent, but nothing confirmed it played: no hang-up yet, and the stream stays open.
        await sleep(300);
        expect(api!.control()).toEqual([]);
        expect(stream.isOpen()).toBe(true);
        for (const name of stream.marks()) stream.echoMark(name);
        if (fixture.control.hangup) {
          const hangup = await api!.waitForControl('hangup', call.callSid);
          expect(hangup.callSid).toBe(call.callSid);
        }
        // A carrier without a hang-up call ends the call when its stream closes.
        expect((await stream.closed).code).toBe(1000);
        if (!fixture.control.hangup) expect(api!.requests).toEqual([]);
        expect((await record(call.callSid)).endReason).toBe('end_call');
      });

      it.skipIf(!fixture.control.transfer)(
        "transfers through the carrier's API once the agent has finished speaking",
        async () => {
          const { call, stream, conn } = await connect();
          conn.send({ type: 'SettingsApplied' });
          callFunction(conn, 'transfer_call', { target: TRANSFER_TARGET });
          expect((await functionAnswer(conn)).ok).toBe(true);
          speak(conn, randomBytes(ms(200)), 'Connecting you now.');
          const transfer = await api!.waitForControl('transfer', call.callSid);
          expect(transfer.target).toBe(TRANSFER_TARGET);
          await stream.closed;
          expect((await record(call.callSid)).endReason).toBe('transferred');
        },
      );

      it.skipIf(!fixture.control.hangup)(
        "still ends the call when the carrier's API fails the hang-up (carriers with a hang-up call)",
        async () => {
          const { stream, conn } = await connect();
          conn.send({ type: 'SettingsApplied' });
          api!.failNext(500, 10);
          callFunction(conn, 'end_call', {});
          await functionAnswer(conn);
          speak(conn, randomBytes(ms(100)), 'Goodbye!');
          await api!.waitForControl('hangup');
          expect((await stream.closed).code).toBe(1000);
        },
      );
    });

    describe('teardown', () => {
      it('closes the agent session when the caller hangs up', async () => {
        const { call, stream, conn } = await connect();
        conn.send({ type: 'SettingsApplied' });
        stream.hangUp();
        await conn.closed;
        await stream.closed;
        expect((await record(call.callSid)).endReason).toBe('caller_hangup');
      });

      it('ends the phone call when the agent fails for good, after the fallback message', async () => {
        const { call, stream, conn } = await connect();
        conn.send({ type: 'SettingsApplied' });
        conn.send({ type: 'Error', code: 'INVALID_SETTINGS', description: 'settings rejected' });
        await conn.closed;
        expect((await stream.closed).code).toBe(1000);
        expect(stream.audio().length).toBeGreaterThan(ms(500));
        if (fixture.control.hangup) await api!.waitForControl('hangup', call.callSid);
        else expect(api!.requests).toEqual([]);
        expect((await record(call.callSid)).endReason).toBe('agent_error');
      });
    });

    describe('refusals, before any agent is dialed', () => {
      it.each(fixture.refusals.webhook.filter((s) => s !== 'replayed').map((signing) => [signing]))(
        'refuses a %s webhook',
        async (signing) => {
          // Pre-warming on: a refused webhook must not dial the agent ahead either.
          const ctx = await start({ AGENT_PREWARM: 'true' });
          const announcement = await fixture.announce(ctx, CALL, signing);
          expect(announcement.accepted).toBe(false);
          expect(announcement.status).toBeGreaterThanOrEqual(400);
          expect(announcement.status).toBeLessThan(500);
          await sleep(100);
          expect(agent!.connections).toHaveLength(0);
          expect(api!.control()).toEqual([]);
        },
      );

      it.skipIf(!fixture.refusals.webhook.includes('replayed'))(
        'refuses a replayed webhook: only the first of two identical requests is taken',
        async () => {
          const ctx = await start({ AGENT_PREWARM: 'true' });
          // The fixture sends the request twice and reports what the second one got.
          const announcement = await fixture.announce(ctx, CALL, 'replayed');
          expect(announcement.accepted).toBe(false);
          if (fixture.refusals.replayAcknowledged) expect(announcement.status).toBe(200);
          else {
            expect(announcement.status).toBeGreaterThanOrEqual(400);
            expect(announcement.status).toBeLessThan(500);
          }
          // The first request pre-warmed one agent; the replay dialed none.
          await agent!.nextConnection();
          await sleep(100);
          expect(agent!.connections).toHaveLength(1);
          expect(api!.control()).toEqual([]);
        },
      );

      it.each(fixture.refusals.upgrade.map((signing) => [signing]))(
        'refuses a %s media upgrade',
        async (signing) => {
          const ctx = await start();
          const call = await announced(ctx);
          const upgrade = await fixture.openStream(ctx, call, { signing });
          if (upgrade.opened) {
            streams.push(upgrade.stream);
            upgrade.stream.start();
            expect((await upgrade.stream.closed).code).toBe(1008);
          } else {
            expect(upgrade.status).toBeGreaterThanOrEqual(400);
            expect(upgrade.status).toBeLessThan(500);
          }
          await sleep(100);
          expect(agent!.connections).toHaveLength(0);
        },
      );

      it('refuses a replayed media stream: its token is single-use', async () => {
        const ctx = await start();
        const call = await announced(ctx);
        const first = await open(ctx, call);
        first.start();
        await agent!.nextConnection();
        const replay = await open(ctx, call);
        replay.start();
        expect(await replay.closed).toEqual({ code: 1008, reason: 'token_replayed' });
        expect(agent!.connections).toHaveLength(1);
      });

      it('refuses a media stream whose token has expired', async () => {
        const ctx = await start({ STREAM_TOKEN_TTL_MS: '200' });
        const call = await announced(ctx);
        await sleep(300);
        const stream = await open(ctx, call);
        stream.start();
        expect(await stream.closed).toEqual({ code: 1008, reason: 'token_expired' });
        expect(agent!.connections).toHaveLength(0);
      });
    });
  },
);
