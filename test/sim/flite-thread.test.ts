// Flite's CPU time is spent on its own thread: while a text is synthesised, the server's event loop
// keeps turning (other calls' audio goes on), and a synthesis thread that dies fails only the texts
// it held, with the next text served by a new thread.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { afterEach, describe, expect, it } from 'vitest';
import { FliteThread, MAX_QUEUED_SYNTHESES } from '../../src/sim/speech/flite-thread.js';
import { speakText, warmSpeech } from '../../src/sim/speech/spoken-text.js';

const SCRIPTED = new URL('./scripted-synthesis-worker.mjs', import.meta.url);

/** A long text no other test says, so it is synthesised, not found in the cache. */
function longText(name: string): string {
  return (
    `Hi ${name}, this is Example Dental calling about your check-up next Tuesday at half past three. ` +
    'We wanted to confirm the time, remind you to bring your insurance card and the list of medicines ' +
    'you take, and ask whether you would like a reminder by text message the day before. If the time ' +
    'no longer suits you, press two or say change, and we will offer you the next three free slots. '
  ).repeat(4);
}

/** What ran first, and the worst event-loop stall while `work` was pending. */
async function watchLoop<T>(
  work: () => Promise<T>,
): Promise<{ result: T; order: string[]; maxStallMs: number }> {
  const order: string[] = [];
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  setImmediate(() => order.push('immediate'));
  setTimeout(() => order.push('timer'), 0);
  const result = await work();
  order.push('synthesis');
  // The monitor records a stall when its timer next fires: let it fire once more before reading.
  await new Promise((resolve) => setTimeout(resolve, 30));
  delay.disable();
  return { result, order, maxStallMs: delay.max / 1e6 };
}

const threads: FliteThread[] = [];
function thread(script?: URL): FliteThread {
  const created = new FliteThread(script);
  threads.push(created);
  return created;
}

afterEach(async () => {
  await Promise.all(threads.splice(0).map((t) => t.close()));
});

describe('speech synthesis off the event loop', () => {
  it('lets timers run while a long text is synthesised, with no stall near the synthesis time', async () => {
    const flite = thread();
    await flite.warm();
    const { result, order, maxStallMs } = await watchLoop(() => flite.synthesize(longText('Ada')));
    expect(result.samples.length).toBeGreaterThan(8000 * 20);
    // Flite really worked a while on its thread…
    expect(result.workerMs).toBeGreaterThan(100);
    // …while this thread ran its callbacks and never stalled for anything like that long.
    expect(order.at(-1)).toBe('synthesis');
    expect(order).toContain('immediate');
    expect(order).toContain('timer');
    expect(maxStallMs).toBeLessThan(result.workerMs / 3);
  });

  it('speakText, the path the agent uses, answers after the timers scheduled before it', async () => {
    await warmSpeech();
    const startedAt = performance.now();
    const { result, order, maxStallMs } = await watchLoop(() => speakText(longText('Grace')));
    const tookMs = performance.now() - startedAt;
    expect(result.length).toBeGreaterThan(8000 * 20);
    expect(order.slice(0, 2).sort()).toEqual(['immediate', 'timer']);
    expect(maxStallMs).toBeLessThan(tookMs / 3);
  });

  it('fails the texts a dying thread held, and serves the next text on a new thread', async () => {
    const flite = thread(SCRIPTED);
    const before = await flite.synthesize('hello');
    const crashed = flite.synthesize('crash');
    const queuedBehind = flite.synthesize('queued behind the crash');
    await expect(crashed).rejects.toThrow(/synthesis thread/);
    await expect(queuedBehind).rejects.toThrow(/synthesis thread/);
    const after = await flite.synthesize('hello again');
    expect(after.samples[0]).not.toBe(before.samples[0]);
  });

  it('restarts the real synthesizer after its thread is stopped mid-synthesis', async () => {
    const flite = thread();
    const cut = flite.synthesize(longText('Alan'));
    await flite.close();
    await expect(cut).rejects.toThrow(/synthesis thread exited/);
    const next = await flite.synthesize('Goodbye.');
    expect(next.samples.length).toBeGreaterThan(2000);
  });

  it(`refuses a text beyond ${MAX_QUEUED_SYNTHESES} waiting, instead of queueing without end`, async () => {
    const flite = thread(SCRIPTED);
    const held = Array.from({ length: MAX_QUEUED_SYNTHESES }, () => flite.synthesize('hold'));
    for (const request of held) request.catch(() => undefined);
    await expect(flite.synthesize('one more')).rejects.toThrow(/busy/);
    await flite.close();
    await Promise.allSettled(held);
    // Once the queue is empty again, texts are accepted.
    expect((await flite.synthesize('after')).samples.length).toBe(1);
  });
});
