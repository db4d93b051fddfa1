// One dialer test setup: a store (SQLite in a temp folder unless given), a fake clock, a fake
// carrier, one or more dialers on them, and the campaign service to create and drive campaigns the
// way the admin API does.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import type { AgentProfile } from '../../src/config/types.js';
import { createMetrics, type Metrics } from '../../src/metrics/metrics.js';
import { Dialer, type DialerOptions } from '../../src/outbound/dialer.js';
import type { CampaignEvent } from '../../src/outbound/events.js';
import type { OriginateRequest } from '../../src/outbound/ports.js';
import { CampaignService } from '../../src/outbound/service.js';
import { openSqliteStore } from '../../src/store/sqlite.js';
import type { Store } from '../../src/store/store.js';
import { FakeClock } from './fake-clock.js';
import { type CallScript, FakeOriginator, planScript } from './fake-originator.js';
import { DialPolicy } from '../../src/trust/dial-policy.js';
import { FetchPolicy } from '../../src/trust/fetch-policy.js';

export function profileFixture(extra: Partial<AgentProfile> = {}): AgentProfile {
  return {
    name: 'default',
    language: 'en',
    prompt: 'You call customers about their renewal.',
    greeting: 'Hello, this is Example Dental.',
    think: [{ provider: { type: 'open_ai', model: 'gpt-4o-mini' } }],
    builtins: { endCall: true, transferAllowList: [] },
    httpFunctions: [],
    dtmf: { enabled: true, interDigitTimeoutMs: 2000, terminator: '#', maxDigits: 20 },
    limits: { silencePromptMs: 15_000, silenceHangupMs: 45_000, maxCallMs: 3_600_000 },
    fallback: {},
    tags: [],
    ...extra,
  };
}

export interface Rig {
  clock: FakeClock;
  store: Store;
  originator: FakeOriginator;
  dialers: Dialer[];
  service: CampaignService;
  metrics: Metrics;
  events: CampaignEvent[];
  /** Creates a campaign, adds contacts (CSV text or JSON rows) and starts it; returns its id. */
  campaign(
    body: Record<string, unknown>,
    contacts: string | object[],
    opts?: { start?: boolean },
  ): Promise<string>;
  /** Moves time to `atMs` (or by `ms`), letting every dialer and call do what falls due. */
  runTo(atMs: number): Promise<void>;
  run(ms: number): Promise<void>;
  settle(): Promise<void>;
  /** Another dialer, as another process would run it, on `store` (this rig's by default). */
  addDialer(store?: Store): Dialer;
  close(): Promise<void>;
}

export interface RigOptions {
  startMs?: number;
  store?: Store;
  /** Folder of the SQLite file, to reopen it after a "crash". */
  dataDir?: string;
  script?: (request: OriginateRequest, attempt: number) => CallScript;
  options?: Partial<DialerOptions>;
  profile?: Partial<AgentProfile>;
  dialers?: number;
}

export function sqliteFile(dataDir: string): string {
  return join(dataDir, 'callbridge.db');
}

export async function dialerRig(opts: RigOptions = {}): Promise<Rig> {
  const clock = new FakeClock(opts.startMs ?? Date.UTC(2025, 0, 6, 15, 0, 0));
  const ownDir = opts.store || opts.dataDir ? null : mkdtempSync(join(tmpdir(), 'callbridge-dialer-'));
  const store = opts.store ?? openSqliteStore({ file: sqliteFile(opts.dataDir ?? ownDir!) });
  const originator = new FakeOriginator(clock, opts.script ?? planScript);
  const metrics = createMetrics('test');
  const events: CampaignEvent[] = [];
  const logger = pino({ level: 'silent' });
  const dialers: Dialer[] = [];
  const stores: Store[] = [store];
  let turn = 0;

  const addDialer = (dialerStore: Store = store) => {
    const dialer = new Dialer({
      store: dialerStore,
      originator,
      metrics,
      logger,
      notify: (event) => events.push(event),
      clock,
      instanceId: `test-${dialers.length + 1}`,
      ...(opts.options ? { options: opts.options } : {}),
    });
    if (dialerStore !== store && !stores.includes(dialerStore)) stores.push(dialerStore);
    dialers.push(dialer);
    dialer.start();
    return dialer;
  };
  for (let i = 0; i < (opts.dialers ?? 1); i++) addDialer();
  // Status callbacks reach whichever live instance a balancer picks: here, each in turn.
  originator.sink = {
    attemptFinished: (...args) => {
      const running = dialers.filter((d) => d.isRunning);
      const target = running[turn++ % Math.max(1, running.length)];
      return target ? target.attemptFinished(...args) : Promise.resolve('not_open' as const);
    },
  };

  const service = new CampaignService({
    store,
    profiles: { default: profileFixture(opts.profile) },
    defaultProfile: 'default',
    carriers: ['twilio'],
    logger,
    clock,
    dialPolicy: new DialPolicy(),
    fetchPolicy: new FetchPolicy(),
    get dialer() {
      return dialers.find((d) => d.isRunning) ?? dialers[0] ?? null;
    },
  });

  const settle = async () => {
    for (let round = 0; round < 3; round++) {
      await Promise.all([...dialers.map((d) => d.idle()), originator.settle()]);
    }
  };

  return {
    clock,
    store,
    originator,
    dialers,
    service,
    metrics,
    events,
    addDialer,
    settle,
    async campaign(body, contacts, { start = true } = {}) {
      const created = await service.create({ name: 'test campaign', ...body });
      const added = await service.addContacts(
        created.id,
        typeof contacts === 'string' ? { csv: contacts } : { json: contacts },
      );
      if (added.rejected.length > 0) throw new Error(`rejected: ${JSON.stringify(added.rejected)}`);
      if (start) await service.act(created.id, 'start');
      return created.id;
    },
    runTo: (atMs) => clock.advanceTo(atMs, settle),
    run: (ms) => clock.advance(ms, settle),
    async close() {
      for (const dialer of dialers) await dialer.stop();
      for (const s of stores) await s.close();
      if (ownDir) rmSync(ownDir, { recursive: true, force: true });
    },
  };
}

/** `n` New York numbers whose last two digits are below 40: a person answers and speaks. */
export function personNumbers(n: number, from = 0): string[] {
  return Array.from({ length: n }, (_, i) => {
    const k = from + i;
    return `+1212555${String(Math.floor(k / 40)).padStart(2, '0')}${String(k % 40).padStart(2, '0')}`;
  });
}

export const csvOf = (numbers: readonly string[]) => `phone\n${numbers.join('\n')}\n`;
