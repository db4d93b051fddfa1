// `callbridge bench campaign`: a campaign of --contacts contacts run by a real callbridge process
// against its built-in simulated carrier, to see whether the dialer holds the pace and the cap and
// what it costs. The callees answer as the number plan says with their waits shortened
// (SIM_CALLEE_SPEEDUP=1000); with `--mix quick` (the default) every number is busy, unanswered or
// failing, so no media stream runs and the server's CPU is the scheduler's (the dialer, the store,
// the carrier API round trips and callbacks); `--mix plan` cycles through the whole plan, people and
// voicemails included. Reports, as one JSON object: the pace achieved against the pace set and the
// most dials in any one-second window (from the attempts' own start times), the most calls ever in flight against the cap (exactly, from the
// attempts' start and end times), and the server's CPU time per dial.
import { rmSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { parseArgs } from 'node:util';
import { spawnBenchServer } from './bench-server.js';
import { mostPerSecond } from '../store/pace.js';
import { processCpu } from './proc-stats.js';

export const CAMPAIGN_BENCH_USAGE = `usage: callbridge bench campaign [--contacts N] [--cps N] [--concurrency N] [--mix quick|plan] [--out FILE]

  --contacts N     contacts in the campaign (default 1000)
  --cps N          the pace set, calls per second (default 20)
  --concurrency N  the cap on calls in flight (default 20)
  --mix quick|plan quick: busy, unanswered and failing numbers only, so the scheduler alone is
                   measured (default); plan: the whole simulated number plan, media included
  --out FILE       also write the JSON result here
`;

const TOKEN = 'bench-admin-token-0000';
const AREA_CODES = ['212', '415', '646', '718', '917', '310', '312', '617', '202', '305'];

interface AttemptView {
  startedAt: string | null;
  endedAt: string | null;
}
interface ContactView {
  outcome: string | null;
  attempts: AttemptView[];
}

/** `count` distinct valid numbers whose last two digits pick the callee (src/sim/callee/plan.ts). */
export function benchPhones(count: number, mix: 'quick' | 'plan'): string[] {
  const phones: string[] = [];
  for (let i = 0; i < count; i++) {
    const tail = mix === 'quick' ? 70 + (i % 30) : i % 100;
    const block = Math.floor(i / (mix === 'quick' ? 30 : 100));
    const area = AREA_CODES[block % AREA_CODES.length]!;
    const middle = String(1000 + Math.floor(block / AREA_CODES.length)).slice(-2);
    phones.push(`+1${area}555${middle}${String(tail).padStart(2, '0')}`);
  }
  return phones;
}

/** The most intervals open at once. */
export function maxOverlap(intervals: ReadonlyArray<[number, number]>): number {
  const edges = intervals.flatMap(([start, end]) => [
    [start, 1],
    [end, -1],
  ]);
  // At a tie an end comes before a start: a slot freed and taken at the same instant is one call.
  edges.sort((a, b) => a[0]! - b[0]! || a[1]! - b[1]!);
  let open = 0;
  let most = 0;
  for (const [, delta] of edges) {
    open += delta!;
    most = Math.max(most, open);
  }
  return most;
}

/** The most start times within any one-second window `[t, t + 1000)`. */
export function worstWindow(startsMs: readonly number[]): number {
  const sorted = [...startsMs].sort((a, b) => a - b);
  let most = 0;
  let first = 0;
  for (let last = 0; last < sorted.length; last++) {
    while (sorted[last]! - sorted[first]! >= 1_000) first += 1;
    most = Math.max(most, last - first + 1);
  }
  return most;
}

export async function campaignBenchCommand(args: string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        contacts: { type: 'string' },
        cps: { type: 'string' },
        concurrency: { type: 'string' },
        mix: { type: 'string' },
        out: { type: 'string' },
        help: { type: 'boolean' },
      },
    }));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n${CAMPAIGN_BENCH_USAGE}`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(CAMPAIGN_BENCH_USAGE);
    return 0;
  }
  const contacts = Number(values.contacts ?? 1000);
  const cps = Number(values.cps ?? 20);
  const cap = Number(values.concurrency ?? 20);
  const mix = values.mix ?? 'quick';
  if (
    !(contacts >= 1 && contacts <= 100_000 && cps > 0 && cps <= 100 && cap >= 1) ||
    (mix !== 'quick' && mix !== 'plan')
  ) {
    process.stderr.write(CAMPAIGN_BENCH_USAGE);
    return 2;
  }

  const { server, base, dataDir } = await spawnBenchServer('campaign', {
    ADMIN_TOKEN: TOKEN,
    SIM_CALLEE_SPEEDUP: '1000',
  });
  const admin = async (path: string, body?: unknown, type = 'application/json') => {
    const res = await fetch(`${base}/v1${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, ...(body === undefined ? {} : { 'content-type': type }) },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    if (!res.ok) throw new Error(`${path}: HTTP ${res.status} ${await res.text()}`);
    return res.json() as Promise<Record<string, unknown>>;
  };
  try {
    const ready = Date.now() + 20_000;
    for (;;) {
      if (server.exitCode !== null) throw new Error('the server exited at start');
      const ok = await fetch(`${base}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) break;
      if (Date.now() > ready) throw new Error('the server did not become healthy');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const created = await admin('/campaigns', {
      name: 'bench',
      pacing: { callsPerSecond: cps, maxConcurrent: cap },
      retry: { maxAttempts: 1, delaySeconds: 0, on: ['busy'] },
      amd: { mode: 'voicemail', voicemail: { text: 'This is a benchmark; no need to call back.' } },
    });
    const id = String(created.id);
    await admin(`/campaigns/${id}/contacts`, `phone\n${benchPhones(contacts, mix).join('\n')}\n`, 'text/csv');
    const cpuBefore = processCpu(server.pid!);
    const startedAt = Date.now();
    await admin(`/campaigns/${id}/start`, {});
    let sampledMaxInFlight = 0;
    for (;;) {
      const view = await admin(`/campaigns/${id}`);
      const progress = view.progress as { inFlight: number };
      sampledMaxInFlight = Math.max(sampledMaxInFlight, progress.inFlight);
      if (view.state === 'completed') break;
      if (server.exitCode !== null) throw new Error('the server exited during the campaign');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const wallMs = Date.now() - startedAt;
    const cpuAfter = processCpu(server.pid!);

    const all: ContactView[] = [];
    let cursor: string | null = null;
    do {
      const page = (await admin(
        `/campaigns/${id}/contacts?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      )) as { contacts: ContactView[]; nextCursor: string | null };
      all.push(...page.contacts);
      cursor = page.nextCursor;
    } while (cursor);
    const intervals = all.flatMap((contact) =>
      contact.attempts.map((a): [number, number] => [
        Date.parse(a.startedAt!),
        Date.parse(a.endedAt ?? a.startedAt!),
      ]),
    );
    const starts = intervals.map(([start]) => start).sort((a, b) => a - b);
    const spanS = (starts.at(-1)! - starts[0]!) / 1000;
    const outcomes: Record<string, number> = {};
    for (const contact of all)
      outcomes[contact.outcome ?? 'none'] = (outcomes[contact.outcome ?? 'none'] ?? 0) + 1;
    const cpuMs =
      cpuBefore && cpuAfter
        ? cpuAfter.userMs + cpuAfter.systemMs - cpuBefore.userMs - cpuBefore.systemMs
        : null;
    const result = {
      contacts,
      mix,
      dials: intervals.length,
      outcomes,
      pace: {
        setCallsPerSecond: cps,
        achievedCallsPerSecond: spanS > 0 ? Math.round(((intervals.length - 1) / spanS) * 100) / 100 : null,
        ratio: spanS > 0 ? Math.round(((intervals.length - 1) / spanS / cps) * 1000) / 1000 : null,
        /** The most dials begun within any one-second window: never above the pace. */
        worstWindowDials: worstWindow(starts),
        mostPerSecond: mostPerSecond(cps),
      },
      inFlight: { cap, maxExact: maxOverlap(intervals), maxSampled: sampledMaxInFlight },
      wallSeconds: Math.round(wallMs / 100) / 10,
      serverCpu: {
        ms: cpuMs,
        msPerDial: cpuMs === null ? null : Math.round((cpuMs / intervals.length) * 100) / 100,
        percentOfOneCore: cpuMs === null ? null : Math.round((cpuMs / wallMs) * 1000) / 10,
      },
      machine: { cores: cpus().length, memoryMB: Math.round(totalmem() / 2 ** 20), node: process.version },
      date: new Date().toISOString(),
    };
    const text = `${JSON.stringify(result, null, 2)}\n`;
    process.stdout.write(text);
    if (values.out) writeFileSync(values.out, text);
    const held = result.inFlight.maxExact <= cap && result.pace.worstWindowDials <= result.pace.mostPerSecond;
    return held ? 0 : 1;
  } catch (err) {
    process.stderr.write(`callbridge bench campaign: ${(err as Error).message}\n`);
    return 1;
  } finally {
    if (server.exitCode === null && server.signalCode === null) {
      const exited = new Promise((resolve) => server.once('exit', resolve));
      server.kill('SIGTERM');
      await exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  }
}
