// `callbridge bench upload`: whether a large upload stalls the server. A real callbridge process
// takes a contacts CSV of --mb megabytes (50,000 rows, the most one upload holds, padded with
// variables) and then a do-not-call CSV of the same size, while this process asks `/healthz` every
// 10 ms; a health check waits as long as the event loop is blocked, so its slowest answer is the
// longest stall a live call's audio would have seen. Reports, as one JSON object, each upload's time
// and the health checks' latency during it, beside their latency with no upload (the machine's own
// floor); exit 1 when a health check during an upload took longer than the budget.
import { rmSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { parseArgs } from 'node:util';
import { benchPhones } from './campaign.js';
import { spawnBenchServer } from './bench-server.js';
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

export async function uploadBenchCommand(args: string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        mb: { type: 'string' },
        'budget-ms': { type: 'string' },
        out: { type: 'string' },
        help: { type: 'boolean' },
      },
    }));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n${UPLOAD_BENCH_USAGE}`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(UPLOAD_BENCH_USAGE);
    return 0;
  }
  const mb = Number(values.mb ?? 10);
  const budgetMs = Number(values['budget-ms'] ?? 100);
  if (!(mb >= 1 && mb <= 15 && budgetMs > 0)) {
    process.stderr.write(UPLOAD_BENCH_USAGE);
    return 2;
  }

  const { server, base, dataDir } = await spawnBenchServer('upload', {
    ADMIN_TOKEN: TOKEN,
  });
  const admin = async (path: string, body: string, type: string) => {
    const res = await fetch(`${base}/v1${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': type },
      body,
    });
    if (!res.ok) throw new Error(`${path}: HTTP ${res.status} ${(await res.text()).slice(0, 200)}`);
    return res.json() as Promise<Record<string, unknown>>;
  };
  const measure = async (path: string, csv: string): Promise<UploadResult> => {
    const started = performance.now();
    const upload = admin(path, csv, 'text/csv');
    const [healthz] = await Promise.all([probeWhile(base, upload), upload]);
    return { bytes: Buffer.byteLength(csv), uploadMs: Math.round(performance.now() - started), healthz };
  };
  try {
    const ready = Date.now() + 20_000;
    for (;;) {
      if (server.exitCode !== null) throw new Error('the server exited at start');
      if (
        await fetch(`${base}/healthz`).then(
          (r) => r.ok,
          () => false,
        )
      )
        break;
      if (Date.now() > ready) throw new Error('the server did not become healthy');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // The same probes with nothing to do: on a shared machine the floor is not zero.
    const idle = await probeWhile(base, new Promise((resolve) => setTimeout(resolve, IDLE_PROBE_MS)));
    const bytes = mb * 1024 * 1024;
    const phones = benchPhones(ROWS, 'plan');
    const created = await admin('/campaigns', JSON.stringify({ name: 'bench upload' }), 'application/json');
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
      machine: { cores: cpus().length, memoryMB: Math.round(totalmem() / 2 ** 20), node: process.version },
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
    if (server.exitCode === null && server.signalCode === null) {
      const exited = new Promise((resolve) => server.once('exit', resolve));
      server.kill('SIGTERM');
      await exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  }
}
