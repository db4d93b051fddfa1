// The polite endings on fake timers, with a fake host for the call's state, a fake agent and a
// recording leg behind a real downlink: a goodbye heard before the end, the caps, the drain's own
// recording, and the one transfer path with its one failure rule for the operator's, a function's
// and the fallback's transfers.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { AgentClientMessage } from '../../../src/agent/protocol.js';
import type { MediaFormat } from '../../../src/audio/format.js';
import { realClock } from '../../../src/call/clock.js';
import { Downlink } from '../../../src/call/downlink/downlink.js';
import type { EndReason } from '../../../src/call/record/end-reason.js';
import {
  type Ending,
  Endings,
  type EndingsHost,
  FAREWELL_CAP_MS,
  REPLY_START_GRACE_MS,
  TRANSFER_FAILED,
} from '../../../src/call/session/endings.js';
import type { PromptPlayer } from '../../../src/call/session/fallback-audio.js';
import { type FakeLeg, fakeLeg, silentLogger } from '../../helpers/call-fakes.js';

const MULAW_8K: MediaFormat = { encoding: 'mulaw', sampleRate: 8000, channels: 1 };
const FALLBACK = Buffer.alloc(800, 0x7e);
const DRAIN_PROMPT = Buffer.alloc(400, 0x55);

interface Host extends EndingsHost {
  endings: Ending[];
  ended: EndReason[];
  resumed: number;
  /** What `resume` answers: whether an agent carries the call. */
  agentReady: boolean;
}

function fakeHost(): Host {
  const host: Host = {
    endings: [],
    ended: [],
    resumed: 0,
    agentReady: true,
    begin(ending) {
      if (host.endings.length > host.resumed || host.ended.length > 0) return false;
      host.endings.push(ending);
      return true;
    },
    end(reason) {
      if (host.ended.length === 0) host.ended.push(reason);
    },
    get isEnding() {
      return host.ended.length > 0;
    },
    resume() {
      host.resumed++;
      return host.agentReady;
    },
  };
  return host;
}

let leg: FakeLeg;
let downlink: Downlink;
let host: Host;
let sent: AgentClientMessage[];
let agentClosed: boolean;

function endings(
  opts: { fallbackTransferTo?: string; fallbackAudio?: Buffer | null; prompts?: PromptPlayer } = {},
) {
  return new Endings({
    host,
    leg,
    downlink,
    agent: {
      send: (message) => sent.push(message),
      close: () => {
        agentClosed = true;
      },
    },
    format: MULAW_8K,
    fallbackTransferTo: opts.fallbackTransferTo ?? null,
    fallbackAudio: opts.fallbackAudio === undefined ? FALLBACK : opts.fallbackAudio,
    ...(opts.prompts ? { prompts: opts.prompts } : {}),
    logger: silentLogger(),
  });
}

const echo = () => leg.echoMarks((name) => downlink.markPlayed(name));
const settle = () => vi.advanceTimersByTimeAsync(0);
const injected = () =>
  sent.flatMap((m) => (m.type === 'InjectAgentMessage' ? [(m as { message: string }).message] : []));

/** The agent speaks a reply through the downlink, as the session routes it. */
function reply(bytes: number): void {
  downlink.replyStarted();
  downlink.audio(Buffer.alloc(bytes, 0x11));
  downlink.replyDone();
}

beforeEach(() => {
  vi.useFakeTimers();
  leg = fakeLeg();
  downlink = new Downlink({
    leg,
    rules: { frameBytes: 160 },
    format: MULAW_8K,
    clock: realClock,
    counts: { downFrames: 0, downBytes: 0 },
  });
  host = fakeHost();
  sent = [];
  agentClosed = false;
});

afterEach(() => {
  vi.useRealTimers();
});

describe('a goodbye', () => {
  it('asks the agent to say it (behavior queue) and ends only once the carrier played it', async () => {
    const done = endings().goodbye('silence_timeout', 'Goodbye.', true);
    expect(host.endings).toEqual([{ kind: 'goodbye', reason: 'silence_timeout' }]);
    expect(sent).toEqual([{ type: 'InjectAgentMessage', message: 'Goodbye.', behavior: 'queue' }]);
    reply(1600);
    await settle();
    expect(host.ended).toEqual([]);
    echo();
    await done;
    expect(host.ended).toEqual(['silence_timeout']);
  });

  it('ends within the cap when the goodbye never comes', async () => {
    const done = endings().goodbye('max_duration', 'Goodbye.', true);
    await vi.advanceTimersByTimeAsync(REPLY_START_GRACE_MS * 2 - 1);
    expect(host.ended).toEqual([]);
    await vi.advanceTimersByTimeAsync(FAREWELL_CAP_MS);
    await done;
    expect(host.ended).toEqual(['max_duration']);
  });

  it("a drain whose goodbye the agent refuses plays the drain's own recording, with the agent closed", async () => {
    const prompts: PromptPlayer = async (kind) => (kind === 'drain_goodbye' ? DRAIN_PROMPT : null);
    const ending = endings({ prompts });
    const done = ending.goodbye('shutdown', 'Bye.', true);
    ending.injectionRefused();
    await settle();
    expect(agentClosed).toBe(true);
    expect(leg.audio().equals(DRAIN_PROMPT)).toBe(true);
    echo();
    await settle();
    echo(); // the goodbye's own last mark
    await done;
    expect(host.ended).toEqual(['shutdown']);
  });

  it('starts no second ending while one is under way', async () => {
    const ending = endings();
    void ending.endAfterReply();
    void ending.goodbye('shutdown', 'Bye.', true);
    await expect(ending.transferNow('+15550199')).rejects.toThrow('already ending');
    expect(host.endings).toEqual([{ kind: 'goodbye', reason: 'end_call' }]);
    expect(sent).toEqual([]);
  });
});

describe('one transfer path, one failure rule', () => {
  it("a function's transfer waits for the last words to be heard, then moves the call", async () => {
    const done = endings().transferAfterReply('+15550199');
    reply(800);
    await settle();
    expect(leg.transfers).toEqual([]);
    echo();
    await done;
    expect(leg.transfers).toEqual(['+15550199']);
    expect(host.ended).toEqual(['transferred']);
  });

  it("a failed function's transfer hands the call back, and the agent that carries it apologises", async () => {
    leg.failTransfers = true;
    const done = endings().transferAfterReply('+15550199');
    reply(800);
    await settle();
    echo();
    await done;
    expect(host.resumed).toBe(1);
    expect(host.ended).toEqual([]);
    expect(injected()).toEqual([TRANSFER_FAILED]);
  });

  it("a failed operator's transfer hands the call back and throws; with no agent ready nothing is said", async () => {
    leg.failTransfers = true;
    host.agentReady = false;
    await expect(endings().transferNow('+15550199')).rejects.toThrow('transfer refused');
    expect(host.resumed).toBe(1);
    expect(host.ended).toEqual([]);
    expect(injected()).toEqual([]);
  });

  it('an operator cannot transfer where the carrier has no call control', async () => {
    leg = fakeLeg({ canTransfer: false });
    await expect(endings().transferNow('+15550199')).rejects.toThrow('no call-control API');
    expect(host.endings).toEqual([]);
  });

  it("the fallback's transfer, when it fails, goes on to the fallback message, never back to an agent", async () => {
    leg.failTransfers = true;
    const done = endings({ fallbackTransferTo: '+15550123' }).fallback('agent_unreachable');
    await settle();
    expect(host.resumed).toBe(0);
    expect(leg.audio().equals(FALLBACK)).toBe(true);
    echo();
    await done;
    expect(host.ended).toEqual(['agent_unreachable']);
  });

  it("the fallback's transfer, when it works, ends the call as transferred with nothing played", async () => {
    await endings({ fallbackTransferTo: '+15550123' }).fallback('agent_refused');
    expect(leg.transfers).toEqual(['+15550123']);
    expect(host.ended).toEqual(['transferred']);
    expect(leg.audio().length).toBe(0);
  });

  it('a call that ended while the carrier was asked is not handed back', async () => {
    leg.transfer = async () => {
      host.end('caller_hangup');
      throw new Error('call not found');
    };
    await expect(endings().transferNow('+15550199')).rejects.toThrow('call not found');
    expect(host.resumed).toBe(0);
    expect(host.ended).toEqual(['caller_hangup']);
  });
});

describe('the fallback with no number', () => {
  it("plays the profile's recording, else the unavailable prompt, and ends once it was heard", async () => {
    const prompts: PromptPlayer = async (kind) => (kind === 'unavailable' ? DRAIN_PROMPT : null);
    const done = endings({ fallbackAudio: null, prompts }).fallback('agent_error');
    await settle();
    expect(leg.audio().equals(DRAIN_PROMPT)).toBe(true);
    expect(host.ended).toEqual([]);
    echo();
    await done;
    expect(host.ended).toEqual(['agent_error']);
  });
});
