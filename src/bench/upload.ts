// `callbridge bench upload`: whether a large upload stalls the server. A real callbridge process
// takes a contacts CSV of --mb megabytes (50,000 rows, the most one upload holds, padded with
// variables) and then a do-not-call CSV of the same size, while this process asks `/healthz` every
// 10 ms; a health check waits as long as the event loop is blocked, so its slowest answer is the
// longest stall a live call's audio would have seen. Reports, as one JSON object, each upload's time
// and the health checks' latency during it, beside their latency with no upload (the machine's own
// floor); exit 1 when a health check during an upload took longer than the budget.
import { writeFileSync } from 'node:fs';
import { benchAdmin, spawnBenchServer, stopBenchServer, waitForHealthz } from './bench-server.js';
import { benchPhones } from './campaign.js';
import { parseBenchOptions, usageError } from './options.js';
import { machineSummary } from './proc-stats.js';
import { type LatencySummary, Samples } from './samples.js';

export const UPLOAD_BENCH_USAGE = `usage: callbridge bench upload [--mb N] [--budget-ms MS] [--out FILE]

  --mb N           size of each upload in megabytes, 1 to 15 (default 10)
  --budget-ms MS   the slowest /healthz answer allowed during an upload (default 100)
  --out FILE       also write the JSON result here
`;

const TOKEN = 'bench-admin-token-0000';
/** The most rows one upload takes (src/outbound/contacts-import.ts). */
const ROWS = 50_000;
const PROBE_EVERY_MS = 10;
/** How long /healthz is probed with no upload running, for the machine's own floor. */
const IDLE_PROBE_MS = 3_000;

/** A CSV of `rows` rows with a `phone` column, padded with variables to about `bytes`. */
export function uploadCsv(phones: readonly string[], bytes: number): string {
  const header = 'phone,first_name,company,note\n';
  const perRow = Math.max(0, Math.floor((bytes - header.length) / phones.length) - 40);
  const note = 'x'.repeat(Math.max(1, perRow));
  return header + phones.map((phone, i) => `${phone},Name${i},Company ${i % 997},${note}\n`).join('');
}

interface UploadResult {
  bytes: number;
  uploadMs: number;
  healthz: LatencySummary;
}

/** Asks /healthz every PROBE_EVERY_MS until `done` settles; the latency of each answer. */
async function probeWhile(base: string, done: Promise<unknown>): Promise<LatencySummary> {
  const samples = new Samples();
  let finished = false;
  void done.finally(() => (finished = true)).catch(() => {});
  while (!finished) {
    const started = performance.now();
    await fetch(`${base}/healthz`).then((res) => res.arrayBuffer());
    samples.push(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, PROBE_EVERY_MS));
  }
  return samples.summary();
}

const COMMAND = 'bench upload';

export async function uploadBenchCommand(args: string[]): Promise<number> {
  const values = parseBenchOptions(
    COMMAND,
    args,
    { mb: { type: 'string' }, 'budget-ms': { type: 'string' }, out: { type: 'string' } },
    UPLOAD_BENCH_USAGE,
  );
  if (typeof values === 'number') return values;
  const mb = Number(values.mb ?? 10);
  const budgetMs = Number(values['budget-ms'] ?? 100);
  if (!(mb >= 1 && mb <= 15 && budgetMs > 0)) return usageError(COMMAND, UPLOAD_BENCH_USAGE);

  const bench = await spawnBenchServer('upload', {
    ADMIN_TOKEN: TOKEN,
  });
  const { base } = bench;
  const admin = benchAdmin(base, TOKEN);
  const measure = async (path: string, csv: string): Promise<UploadResult> => {
    const started = performance.now();
    const upload = admin(path, csv, 'text/csv');
    const [healthz] = await Promise.all([probeWhile(base, upload), upload]);
    return { bytes: Buffer.byteLength(csv), uploadMs: Math.round(performance.now() - started), healthz };
  };
  try {
    await waitForHealthz(bench);
    // The same probes with nothing to do: on a shared machine the floor is not zero.
    const idle = await probeWhile(base, new Promise((resolve) => setTimeout(resolve, IDLE_PROBE_MS)));
    const bytes = mb * 1024 * 1024;
    const phones = benchPhones(ROWS, 'plan');
    const created = await admin('/campaigns', { name: 'bench upload' });
    const contacts = await measure(`/campaigns/${String(created.id)}/contacts`, uploadCsv(phones, bytes));
    const doNotCall = await measure('/dnc', uploadCsv(phones, bytes));
    const slowest = Math.max(contacts.healthz.max ?? 0, doNotCall.healthz.max ?? 0);
    const result = {
      rows: ROWS,
      budgetMs,
      idleHealthz: idle,
      contacts,
      doNotCall,
      withinBudget: slowest <= budgetMs,
      machine: machineSummary(),
      date: new Date().toISOString(),
    };
    const text = `${JSON.stringify(result, null, 2)}\n`;
    process.stdout.write(text);
    if (values.out) writeFileSync(values.out, text);
    return result.withinBudget ? 0 : 1;
  } catch (err) {
    process.stderr.write(`callbridge bench upload: ${(err as Error).message}\n`);
    return 1;
  } finally {
    await stopBenchServer(bench);
  }
}
