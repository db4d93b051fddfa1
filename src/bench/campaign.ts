// `callbridge bench campaign`: a campaign of --contacts contacts run by a real callbridge process
// against its built-in simulated carrier, to see whether the dialer holds the pace and the cap and
// what it costs. The callees answer as the number plan says with their waits shortened
// (SIM_CALLEE_SPEEDUP=1000); with `--mix quick` (the default) every number is busy, unanswered or
// failing, so no media stream runs and the server's CPU is the scheduler's (the dialer, the store,
// the carrier API round trips and callbacks); `--mix plan` cycles through the whole plan, people and
// voicemails included. Reports, as one JSON object: the pace achieved against the pace set and the
// most dials in any one-second window (from the attempts' own start times), the most calls ever in flight against the cap (exactly, from the
// attempts' start and end times), and the server's CPU time per dial.
import { writeFileSync } from 'node:fs';
import { mostPerSecond } from '../store/pace.js';
import {
  type BenchAdmin,
  benchAdmin,
  type BenchServer,
  spawnBenchServer,
  stopBenchServer,
  waitForHealthz,
} from './bench-server.js';
import { parseBenchOptions, usageError } from './options.js';
import { cpuSpentMs, machineSummary, processCpu } from './proc-stats.js';

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

const COMMAND = 'bench campaign';

interface CampaignBenchOptions {
  contacts: number;
  cps: number;
  cap: number;
  mix: 'quick' | 'plan';
  out: string | undefined;
}

/** The options, or the exit status of a usage error or of --help. */
function campaignBenchOptions(args: string[]): CampaignBenchOptions | number {
  const values = parseBenchOptions(
    COMMAND,
    args,
    {
      contacts: { type: 'string' },
      cps: { type: 'string' },
      concurrency: { type: 'string' },
      mix: { type: 'string' },
      out: { type: 'string' },
    },
    CAMPAIGN_BENCH_USAGE,
  );
  if (typeof values === 'number') return values;
  const contacts = Number(values.contacts ?? 1000);
  const cps = Number(values.cps ?? 20);
  const cap = Number(values.concurrency ?? 20);
  const mix = values.mix ?? 'quick';
  if (
    !(contacts >= 1 && contacts <= 100_000 && cps > 0 && cps <= 100 && cap >= 1) ||
    (mix !== 'quick' && mix !== 'plan')
  ) {
    return usageError(COMMAND, CAMPAIGN_BENCH_USAGE);
  }
  return { contacts, cps, cap, mix, out: values.out };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Every contact of the campaign, page by page. */
async function allContacts(admin: BenchAdmin, id: string): Promise<ContactView[]> {
  const all: ContactView[] = [];
  let cursor: string | null = null;
  do {
    const page = (await admin(
      `/campaigns/${id}/contacts?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    )) as { contacts: ContactView[]; nextCursor: string | null };
    all.push(...page.contacts);
    cursor = page.nextCursor;
  } while (cursor);
  return all;
}

interface CampaignRun {
  contacts: ContactView[];
  wallMs: number;
  cpuMs: number | null;
  sampledMaxInFlight: number;
}

/** Creates the campaign, fills it, starts it and follows it to its end, timing the server's CPU. */
async function runCampaign(
  bench: BenchServer,
  admin: BenchAdmin,
  o: CampaignBenchOptions,
): Promise<CampaignRun> {
  const { server } = bench;
  const created = await admin('/campaigns', {
    name: 'bench',
    pacing: { callsPerSecond: o.cps, maxConcurrent: o.cap },
    retry: { maxAttempts: 1, delaySeconds: 0, on: ['busy'] },
    amd: { mode: 'voicemail', voicemail: { text: 'This is a benchmark; no need to call back.' } },
  });
  const id = String(created.id);
  await admin(
    `/campaigns/${id}/contacts`,
    `phone\n${benchPhones(o.contacts, o.mix).join('\n')}\n`,
    'text/csv',
  );
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
    await sleep(100);
  }
  const wallMs = Date.now() - startedAt;
  const cpuMs = cpuSpentMs(cpuBefore, processCpu(server.pid!));
  return { contacts: await allContacts(admin, id), wallMs, cpuMs, sampledMaxInFlight };
}

/** The pace achieved and held, the calls in flight against the cap, and the CPU per dial. */
function campaignResult(o: CampaignBenchOptions, run: CampaignRun) {
  const { contacts: all, wallMs, cpuMs } = run;
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
  return {
    contacts: o.contacts,
    mix: o.mix,
    dials: intervals.length,
    outcomes,
    pace: {
      setCallsPerSecond: o.cps,
      achievedCallsPerSecond: spanS > 0 ? Math.round(((intervals.length - 1) / spanS) * 100) / 100 : null,
      ratio: spanS > 0 ? Math.round(((intervals.length - 1) / spanS / o.cps) * 1000) / 1000 : null,
      /** The most dials begun within any one-second window: never above the pace. */
      worstWindowDials: worstWindow(starts),
      mostPerSecond: mostPerSecond(o.cps),
    },
    inFlight: { cap: o.cap, maxExact: maxOverlap(intervals), maxSampled: run.sampledMaxInFlight },
    wallSeconds: Math.round(wallMs / 100) / 10,
    serverCpu: {
      ms: cpuMs,
      msPerDial: cpuMs === null ? null : Math.round((cpuMs / intervals.length) * 100) / 100,
      percentOfOneCore: cpuMs === null ? null : Math.round((cpuMs / wallMs) * 1000) / 10,
    },
    machine: machineSummary(),
    date: new Date().toISOString(),
  };
}

export async function campaignBenchCommand(args: string[]): Promise<number> {
  const options = campaignBenchOptions(args);
  if (typeof options === 'number') return options;
  const bench = await spawnBenchServer('campaign', {
    ADMIN_TOKEN: TOKEN,
    SIM_CALLEE_SPEEDUP: '1000',
  });
  try {
    await waitForHealthz(bench);
    const result = campaignResult(options, await runCampaign(bench, benchAdmin(bench.base, TOKEN), options));
    const text = `${JSON.stringify(result, null, 2)}\n`;
    process.stdout.write(text);
    if (options.out) writeFileSync(options.out, text);
    const held =
      result.inFlight.maxExact <= options.cap && result.pace.worstWindowDials <= result.pace.mostPerSecond;
    return held ? 0 : 1;
  } catch (err) {
    process.stderr.write(`callbridge bench campaign: ${(err as Error).message}\n`);
    return 1;
  } finally {
    await stopBenchServer(bench);
  }
}
