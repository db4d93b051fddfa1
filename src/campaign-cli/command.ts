// `callbridge campaign …`: runs and follows campaigns through the admin API of a running server.
//   run FILE.csv [--profile P] [--cps N] [--concurrency N] [--server URL] [--out FILE] [--name NAME]
//                [--amd voicemail|hangup|off] [--voicemail TEXT] [--voicemail-audio URL]
//                [--max-attempts N] [--retry-delay S] [--dnc FILE]
//       creates a campaign from the CSV, starts it, shows its progress until it ends, writes the results
//   list                         the campaigns, newest first
//   status ID [--watch]          the campaign's progress, once or until it ends
//   pause|resume|cancel ID       a lifecycle step
//   export ID [--out FILE]       the results CSV
// Exit codes: 0 done (a campaign that ran to completion), 1 failed or cancelled, 2 usage, 130 when
// interrupted (the campaign goes on).
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { basename, dirname, extname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { type AdminClient, adminClient } from './client.js';
import {
  type CampaignListEntry,
  type CampaignSnapshot,
  campaignTable,
  eraseLines,
  fitWidth,
  pauseText,
  progressBlock,
  progressLine,
} from './display.js';
import { cliAdminToken } from './token.js';

export interface CampaignIo {
  stdout: { write(text: string): unknown; isTTY?: boolean; columns?: number };
  stderr(text: string): void;
  env: Record<string, string | undefined>;
  cwd: string;
  /** Time between progress polls. */
  pollMs: number;
  /** Calls `stop` on Ctrl-C while following; returns how to remove the handler. */
  onInterrupt(stop: () => void): () => void;
}

const processIo: CampaignIo = {
  stdout: process.stdout,
  stderr: (text) => process.stderr.write(text),
  env: process.env,
  cwd: process.cwd(),
  pollMs: 1_000,
  onInterrupt: (stop) => {
    process.once('SIGINT', stop);
    return () => process.off('SIGINT', stop);
  },
};

/** Defaults of `run`: a voicemail after the beep, and one more try for busy and unanswered calls. */
export const RUN_DEFAULTS = {
  voicemail:
    'Hello, this is an automated call. Sorry we missed you; we will try again another time. Goodbye.',
  maxAttempts: 2,
  retryDelaySeconds: 30,
} as const;

export const CAMPAIGN_USAGE = `usage: callbridge campaign <command> [options]

  run FILE.csv       create a campaign from the contacts, start it, follow it, write the results
  list               the campaigns, newest first
  status ID          the campaign's progress
  pause ID | resume ID | cancel ID
  export ID          the results CSV

options of run:
  --profile P              the agent profile the calls use (default: the server's default)
  --cps N                  calls started per second at most (default: the server's)
  --concurrency N          calls up at once at most (default: the server's)
  --name NAME              the campaign's name (default: the file's name)
  --amd MODE               answering machines: voicemail (leave one), hangup or off (default voicemail)
  --voicemail TEXT         what the voicemail says (with --amd voicemail; a default otherwise)
  --voicemail-audio URL    a recording to leave as the voicemail instead (with --amd voicemail)
  --max-attempts N         calls per contact at most, retries included (default ${RUN_DEFAULTS.maxAttempts})
  --retry-delay SECONDS    wait before a busy or unanswered contact is called again (default ${RUN_DEFAULTS.retryDelaySeconds})
  --dnc FILE               add these numbers (CSV, a phone column) to the do-not-call list first
options of status:
  --watch                  follow the progress until the campaign ends
options of run and export:
  --out FILE               where the results CSV goes (default $DATA_DIR/results-ID.csv)
options of every command:
  --server URL             the server (default http://127.0.0.1:$PORT, PORT 8080)

The admin token is ADMIN_TOKEN, else $DATA_DIR/admin-token (DATA_DIR ./data).
`;

const ENDED = new Set(['completed', 'cancelled']);

class UsageError extends Error {}

const OPTIONS = {
  server: { type: 'string' },
  profile: { type: 'string' },
  cps: { type: 'string' },
  concurrency: { type: 'string' },
  out: { type: 'string' },
  name: { type: 'string' },
  amd: { type: 'string' },
  voicemail: { type: 'string' },
  'voicemail-audio': { type: 'string' },
  'max-attempts': { type: 'string' },
  'retry-delay': { type: 'string' },
  dnc: { type: 'string' },
  watch: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;
type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values'];

/** Which options each command takes (besides --server and --help). */
const ALLOWED: Record<string, readonly (keyof Values)[]> = {
  run: [
    'profile',
    'cps',
    'concurrency',
    'out',
    'name',
    'amd',
    'voicemail',
    'voicemail-audio',
    'max-attempts',
    'retry-delay',
    'dnc',
  ],
  list: [],
  status: ['watch'],
  pause: [],
  resume: [],
  cancel: [],
  export: ['out'],
};

export async function campaignCommand(args: string[], io: CampaignIo = processIo): Promise<number> {
  let values: Values;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({ args, options: OPTIONS, strict: true, allowPositionals: true }));
  } catch (err) {
    io.stderr(`callbridge campaign: ${(err as Error).message.split('. ')[0]}\n${CAMPAIGN_USAGE}`);
    return 2;
  }
  const [command, target, ...extra] = positionals;
  if (values.help || command === undefined || command === 'help') {
    (values.help || command === 'help' ? io.stdout.write.bind(io.stdout) : io.stderr)(CAMPAIGN_USAGE);
    return values.help || command === 'help' ? 0 : 2;
  }
  try {
    const allowed = ALLOWED[command];
    if (!allowed) throw new UsageError(`unknown command "${command}"`);
    const stray = (Object.keys(values) as (keyof Values)[]).find(
      (k) => k !== 'server' && !allowed.includes(k),
    );
    if (stray) throw new UsageError(`--${stray} does not apply to ${command}`);
    if (command === 'list') {
      if (target !== undefined) throw new UsageError(`unexpected argument "${target}"`);
      const client = adminClient(serverUrl(values.server, io.env), cliAdminToken(io.env, io.cwd));
      const { campaigns } = await client.json<{ campaigns: CampaignListEntry[] }>(
        'GET',
        '/v1/campaigns?limit=100',
      );
      io.stdout.write(`${campaignTable(campaigns).join('\n')}\n`);
      return 0;
    }
    if (target === undefined)
      throw new UsageError(`${command} needs ${command === 'run' ? 'a contacts CSV file' : 'a campaign id'}`);
    if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`);
    const client = adminClient(serverUrl(values.server, io.env), cliAdminToken(io.env, io.cwd));
    switch (command) {
      case 'run':
        return await run(client, target, values, io);
      case 'status':
        return await status(client, target, values.watch === true, io);
      case 'export':
        await exportResults(client, target, values.out, io);
        return 0;
      default: {
        const view = await client.json<CampaignSnapshot>(
          'POST',
          `/v1/campaigns/${encodeURIComponent(target)}/${command}`,
        );
        io.stdout.write(`campaign ${view.id}: ${view.state}\n`);
        return 0;
      }
    }
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr(`callbridge campaign: ${err.message}\n${CAMPAIGN_USAGE}`);
      return 2;
    }
    io.stderr(`callbridge campaign: ${(err as Error).message}\n`);
    return 1;
  }
}

function serverUrl(flag: string | undefined, env: Record<string, string | undefined>): string {
  const url = flag ?? `http://127.0.0.1:${env.PORT?.trim() || '8080'}`;
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
    throw new UsageError(`--server must be an http or https URL, got "${url}"`);
  }
  return url;
}

function number(name: string, raw: string | undefined, rule: RegExp): number | undefined {
  if (raw === undefined) return undefined;
  if (!rule.test(raw)) throw new UsageError(`--${name} must be a positive number, got "${raw}"`);
  return Number(raw);
}

/** The campaign JSON `run` sends; the server validates it like any other. */
export function runCampaignBody(file: string, values: Values): Record<string, unknown> {
  const cps = number('cps', values.cps, /^\d+(\.\d+)?$/);
  const concurrency = number('concurrency', values.concurrency, /^[1-9]\d*$/);
  const maxAttempts =
    number('max-attempts', values['max-attempts'], /^[1-9]\d*$/) ?? RUN_DEFAULTS.maxAttempts;
  const delay = number('retry-delay', values['retry-delay'], /^\d+$/) ?? RUN_DEFAULTS.retryDelaySeconds;
  const amd = values.amd ?? 'voicemail';
  if (!['voicemail', 'hangup', 'off'].includes(amd)) {
    throw new UsageError(`--amd must be voicemail, hangup or off, got "${amd}"`);
  }
  if (values.voicemail !== undefined && amd !== 'voicemail')
    throw new UsageError('--voicemail needs --amd voicemail');
  if (values['voicemail-audio'] !== undefined && amd !== 'voicemail')
    throw new UsageError('--voicemail-audio needs --amd voicemail');
  // A recording given alone plays alone; with --voicemail too, the text is left if it cannot play.
  const audioUrl = values['voicemail-audio'];
  const text = values.voicemail ?? (audioUrl === undefined ? RUN_DEFAULTS.voicemail : undefined);
  return {
    name: values.name ?? basename(file, extname(file)),
    ...(values.profile ? { profile: values.profile } : {}),
    pacing: {
      ...(cps === undefined ? {} : { callsPerSecond: cps }),
      ...(concurrency === undefined ? {} : { maxConcurrent: concurrency }),
    },
    retry: { maxAttempts, delaySeconds: delay, on: ['busy', 'no_answer'] },
    amd:
      amd === 'voicemail'
        ? {
            mode: amd,
            voicemail: {
              ...(text === undefined ? {} : { text }),
              ...(audioUrl === undefined ? {} : { audioUrl }),
            },
          }
        : { mode: amd },
  };
}

async function run(client: AdminClient, file: string, values: Values, io: CampaignIo): Promise<number> {
  const body = runCampaignBody(file, values);
  const csv = await readFile(resolve(io.cwd, file), 'utf8').catch((err: NodeJS.ErrnoException) => {
    throw new Error(`cannot read ${file} (${err.code ?? err.message})`);
  });
  if (values.dnc !== undefined) {
    const list = await readFile(resolve(io.cwd, values.dnc), 'utf8').catch((err: NodeJS.ErrnoException) => {
      throw new Error(`cannot read ${values.dnc} (${err.code ?? err.message})`);
    });
    const listed = await client.csv<{ added: number; alreadyListed: number }>('/v1/dnc', list);
    io.stdout.write(
      `do-not-call list: ${listed.added} numbers added, ${listed.alreadyListed} already listed\n`,
    );
  }
  const created = await client.json<CampaignSnapshot>('POST', '/v1/campaigns', body);
  const path = `/v1/campaigns/${created.id}`;
  const added = await client.csv<{ added: number; rejected: Array<{ row: number; reason: string }> }>(
    `${path}/contacts`,
    csv,
  );
  io.stdout.write(
    `campaign ${created.id} "${created.name}": ${added.added} contacts added, ${added.rejected.length} rows rejected\n`,
  );
  for (const { row, reason } of added.rejected.slice(0, 20)) io.stdout.write(`  row ${row}: ${reason}\n`);
  if (added.rejected.length > 20) io.stdout.write(`  … and ${added.rejected.length - 20} more\n`);
  await client.json('POST', `${path}/start`);
  const final = await follow(client, created.id, io);
  if (final === null) return 130;
  await exportResults(client, created.id, values.out, io);
  return final.state === 'completed' ? 0 : 1;
}

async function status(client: AdminClient, id: string, watch: boolean, io: CampaignIo): Promise<number> {
  const path = `/v1/campaigns/${encodeURIComponent(id)}`;
  if (!watch) {
    const view = await client.json<CampaignSnapshot>('GET', path);
    io.stdout.write(`${progressBlock(view, Date.now()).join('\n')}\n`);
    return 0;
  }
  const final = await follow(client, id, io);
  return final === null ? 130 : 0;
}

/** Polls the campaign until it ends; null when interrupted. */
async function follow(client: AdminClient, id: string, io: CampaignIo): Promise<CampaignSnapshot | null> {
  const path = `/v1/campaigns/${encodeURIComponent(id)}`;
  const tty = io.stdout.isTTY === true;
  let drawn = 0;
  let lastLine = '';
  let lastPause = '';
  let interrupted = false;
  let wake: (() => void) | null = null;
  const removeHandler = io.onInterrupt(() => {
    interrupted = true;
    wake?.();
  });
  try {
    for (;;) {
      const view = await client.json<CampaignSnapshot>('GET', path);
      if (tty) {
        // Everything on screen is in the block (the pause notice too), so a redraw covers it all.
        const block = fitWidth(progressBlock(view, Date.now()), io.stdout.columns);
        io.stdout.write(`${eraseLines(drawn)}${block.join('\n')}\n`);
        drawn = block.length;
      } else {
        const line = progressLine(view, Date.now());
        // One line per change. The elapsed time, the pace measured and the estimate move every
        // second by themselves: a log would get a line a second with nothing new in it.
        const key = line
          .replace(/^\S+ /, '')
          .replace(/, pace [^,;]*/, '')
          .replace(/ · about \S+ left/, '');
        if (key !== lastLine) io.stdout.write(`${line}\n`);
        lastLine = key;
      }
      const pause = view.pause ? pauseText(view.pause) : '';
      if (!tty && pause !== '' && pause !== lastPause) {
        io.stderr(`campaign ${id} is ${pause}\n  resume it with: callbridge campaign resume ${id}\n`);
      }
      lastPause = pause;
      if (ENDED.has(view.state)) return view;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, io.pollMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      if (interrupted) {
        io.stderr(
          `stopped following; the campaign goes on. Follow it with: callbridge campaign status ${id} --watch\n`,
        );
        return null;
      }
    }
  } finally {
    removeHandler();
  }
}

async function exportResults(client: AdminClient, id: string, out: string | undefined, io: CampaignIo) {
  const csv = await client.text(`/v1/campaigns/${encodeURIComponent(id)}/results.csv`);
  // Not the working directory by default: results hold contacts' numbers and belong with the data.
  const file =
    out !== undefined ? resolve(io.cwd, out) : resolve(io.cwd, dataDir(io.env), `results-${id}.csv`);
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  await writeFile(file, csv, { mode: 0o600 });
  io.stdout.write(`results: ${file} (${Math.max(0, csv.trimEnd().split('\n').length - 1)} contacts)\n`);
}

function dataDir(env: Record<string, string | undefined>): string {
  return env.DATA_DIR?.trim() || './data';
}
