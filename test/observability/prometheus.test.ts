// Every Grafana panel and every alert, proven against the real thing: a callbridge app carries
// simulated calls and webhooks over real sockets, promtool lints its /metrics and the rules, and a
// real Prometheus scrapes it; each panel expression must then parse and return series, and each
// alert must fire on the series it watches and stay quiet on healthy ones.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import {
  accessSync,
  constants,
  copyFileSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeAgent, startFakeAgent } from '../helpers/fake-agent.js';
import { freePort } from '../helpers/free-port.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { newCallSid, openMediaStream, voiceWebhook } from '../helpers/twilio-carrier.js';
import { QuickCarrier } from '../outbound/quick-carrier.js';
import { DASHBOARD_FILES, panelTargets, ROOT, readDashboard, variableQuery } from './grafana.js';

/** The binaries of Debian's `prometheus` package, from PATH or /usr/bin. */
function findBinary(name: string): string | null {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/bin'].filter((dir) => dir !== '');
  for (const dir of dirs) {
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {
      // Not in this directory: try the next.
    }
  }
  return null;
}

const PROMETHEUS = findBinary('prometheus');
const PROMTOOL = findBinary('promtool');
const missing = [PROMETHEUS ? null : 'prometheus', PROMTOOL ? null : 'promtool'].filter((n) => n !== null);
if (missing.length > 0) {
  console.warn(
    `skipping test/observability/prometheus.test.ts: ${missing.join(' and ')} not found on PATH or in /usr/bin (apt-get install prometheus)`,
  );
}

const REGION = 'eu';
const ADMIN_TOKEN = 'observability-admin-token';
const SECRETS = { deploy: 'deploy-webhook-secret-for-tests', code: 'code-webhook-secret-for-tests' };
const ALERTS_FILE = join(ROOT, 'prometheus/alerts.yml');
const PROMETHEUS_CONFIG = join(ROOT, 'prometheus/prometheus.yml');
/** What the dashboards' Grafana variables become in the queries sent to Prometheus. */
const RATE_INTERVAL = '1m';

/** 20 ms of μ-law: 0xff decodes to 0 (silence), 0x00 to full scale (speech to the energy detector). */
const SILENT_FRAME = Buffer.alloc(160, 0xff);
const VOICED_FRAME = Buffer.alloc(160, 0x00);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until<T>(
  what: string,
  probe: () => Promise<T | null | undefined | false>,
  timeoutMs = 10_000,
) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** Sample names of a text exposition, and the summed value of the samples matching `labels`. */
function parseExposition(text: string) {
  const samples = text
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)/.exec(line);
      if (!match) throw new Error(`unreadable exposition line: ${line}`);
      return { name: match[1]!, labels: match[2] ?? '', value: Number(match[3]) };
    });
  return {
    names: new Set(samples.map((s) => s.name)),
    sum: (name: string, labels: Record<string, string> = {}) =>
      samples
        .filter(
          (s) =>
            s.name === name && Object.entries(labels).every(([k, v]) => s.labels.includes(`${k}="${v}"`)),
        )
        .reduce((total, s) => total + s.value, 0),
  };
}

function run(command: string, args: string[], input?: string) {
  const result = spawnSync(command, args, { input, encoding: 'utf8', timeout: 20_000 });
  return { status: result.status, output: `${result.stdout ?? ''}${result.stderr ?? ''}` };
}

interface PromResponse<T> {
  status: 'success' | 'error';
  error?: string;
  data: T;
}
type Vector = {
  resultType: string;
  result: Array<{ metric: Record<string, string>; value: [number, string] }>;
};
interface RuleInfo {
  name: string;
  type: 'alerting' | 'recording';
  query: string;
  duration?: number;
  health: string;
  lastError?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

const TWILIO_TOKEN = 'observability-test-twilio-auth-token';

describe.skipIf(missing.length > 0)(
  'dashboards and alerts against a live callbridge and a real Prometheus',
  () => {
    const dirs: string[] = [];
    let agent: FakeAgent;
    let server: TestServer;
    let carrier: QuickCarrier;
    let prometheus: ChildProcess | null = null;
    let prometheusLog = '';
    let promUrl = '';
    let instance = '';
    let metricsText = '';

    async function api<T>(path: string, params: Record<string, string> = {}): Promise<PromResponse<T>> {
      const url = new URL(path, promUrl);
      for (const [key, value] of Object.entries(params)) url.searchParams.append(key, value);
      const res = await fetch(url, { signal: AbortSignal.timeout(5_000) });
      return (await res.json()) as PromResponse<T>;
    }
    const query = (promql: string) => api<Vector>('/api/v1/query', { query: promql });

    async function metrics() {
      return parseExposition(await (await fetch(`${server.baseUrl}/metrics`)).text());
    }

    async function placeCall() {
      const callSid = newCallSid();
      const answer = await voiceWebhook(
        server.baseUrl,
        { CallSid: callSid, From: '+15005550006', To: '+15005550001' },
        { authToken: TWILIO_TOKEN },
      );
      expect(answer.status).toBe(200);
      const carrier = await openMediaStream(answer.streamUrl, { callSid, authToken: TWILIO_TOKEN });
      carrier.start(answer.parameters);
      return { answer, carrier };
    }

    async function connectedCall() {
      const { answer, carrier } = await placeCall();
      const conn = await agent.nextConnection();
      await conn.waitFor('Settings');
      return { answer, carrier, conn };
    }

    /** A conversation with everything an operator watches: drops, a barge-in, a reply, a function. */
    async function conversation() {
      const { answer, carrier, conn } = await connectedCall();
      // More caller audio than the bounded buffer holds before SettingsApplied: the oldest is dropped.
      for (let i = 0; i < 450; i++) carrier.media(SILENT_FRAME);
      await until(
        'a dropped frame',
        async () => (await metrics()).sum('callbridge_audio_frames_dropped_total') > 0,
      );
      conn.send({ type: 'SettingsApplied' });

      conn.send({ type: 'AgentStartedSpeaking', total_latency: 0.45, tts_latency: 0.15, ttt_latency: 0.3 });
      conn.send({
        type: 'LatencyReport',
        stt_latency: 0.1,
        ttt_token_latency: 0.2,
        ttt_text_latency: 0.3,
        tts_latency: 0.15,
        total_latency: 0.45,
      });
      conn.send({ type: 'ConversationText', role: 'assistant', content: 'Hello, how can I help?' });
      conn.sendAudio(randomBytes(24_000)); // three seconds: still playing when the caller talks over it
      await carrier.waitForAudio(24_000);
      conn.send({ type: 'UserStartedSpeaking' });
      await carrier.waitFor((m) => m.event === 'clear');

      // The caller speaks, then falls silent: the bridge marks the end of speech.
      for (let i = 0; i < 10; i++) carrier.media(VOICED_FRAME);
      for (let i = 0; i < 15; i++) carrier.media(SILENT_FRAME);
      // The bridge runs its speech detector before forwarding: once the agent has it all, it has run.
      await until('the caller speech at the agent', async () => {
        const heard = conn.audioBytes();
        const spoke = heard.indexOf(VOICED_FRAME[0]!);
        return spoke >= 0 && heard.length - spoke >= 25 * 160;
      });
      conn.send({ type: 'ConversationText', role: 'user', content: 'Where is my order?' });
      conn.send({
        type: 'FunctionCallRequest',
        functions: [{ id: 'fc_1', name: 'lookup_order', arguments: '{}', client_side: true }],
      });
      await conn.waitFor('FunctionCallResponse');
      conn.send({ type: 'AgentStartedSpeaking', total_latency: 0.8, tts_latency: 0.2, ttt_latency: 0.6 });
      conn.send({ type: 'ConversationText', role: 'assistant', content: 'I cannot look that up, sorry.' });
      conn.sendAudio(randomBytes(1600));
      conn.send({ type: 'AgentAudioDone' });
      await carrier.waitForAudio(24_000 + 1600);
      conn.send({ type: 'Warning', code: 'SLOW_SYNTHESIS', description: 'speech synthesis is slow' });
      await sleep(50);
      carrier.stop();
      await carrier.closed;
      return answer;
    }

    /** The agent drops mid-call and is dialed again; then it ends the call with end_call. */
    async function reconnectThenEndCall() {
      const { carrier, conn } = await connectedCall();
      conn.send({ type: 'SettingsApplied' });
      conn.socket.close(1011, 'agent restarting');
      const again = await agent.nextConnection();
      await again.waitFor('Settings');
      again.send({ type: 'SettingsApplied' });
      again.send({
        type: 'FunctionCallRequest',
        functions: [{ id: 'fc_2', name: 'end_call', arguments: '{}', client_side: true }],
      });
      await again.waitFor('FunctionCallResponse');
      again.send({ type: 'AgentStartedSpeaking', total_latency: 0.5, tts_latency: 0.2, ttt_latency: 0.3 });
      again.sendAudio(randomBytes(800));
      again.send({ type: 'AgentAudioDone' });
      await carrier.closed;
    }

    /** The agent rejects the session with a fatal Error: the call ends with agent_error. */
    async function agentError() {
      const { carrier, conn } = await connectedCall();
      conn.send({ type: 'SettingsApplied' });
      conn.send({ type: 'Error', code: 'INVALID_SETTINGS', description: 'the settings were refused' });
      await carrier.closed;
    }

    /** Every handshake is answered 429: the call ends with agent_refused. */
    async function agentRefused() {
      agent.refuseWith(429);
      try {
        const { carrier } = await placeCall();
        await carrier.closed;
      } finally {
        agent.refuseWith(null);
      }
    }

    async function declined() {
      server.app.callbridge.draining = true;
      try {
        const answer = await voiceWebhook(
          server.baseUrl,
          { CallSid: newCallSid(), From: '+15005550006', To: '+15005550001' },
          { authToken: TWILIO_TOKEN },
        );
        expect(answer.status).toBe(200);
      } finally {
        server.app.callbridge.draining = false;
      }
    }

    /** A stream token is single-use: a second stream with it is refused. */
    async function replayedStream(answer: Awaited<ReturnType<typeof voiceWebhook>>) {
      const carrier = await openMediaStream(answer.streamUrl, {
        callSid: newCallSid(),
        authToken: TWILIO_TOKEN,
      });
      carrier.start(answer.parameters);
      await carrier.closed;
    }

    async function webhook(provider: string, body: string, headers: Record<string, string>) {
      const res = await fetch(`${server.baseUrl}/webhooks/${provider}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body,
      });
      return res.status;
    }

    async function webhooks() {
      const deploy = (type: string, id: string) => {
        const body = JSON.stringify({ id, type, payload: { url: 'https://app.example' } });
        const signature = createHmac('sha1', SECRETS.deploy).update(body).digest('hex');
        return { body, headers: { 'x-deploy-signature': signature } };
      };
      const code = (event: string, action: string) => {
        const body = JSON.stringify({ action, run: { id: 1 } });
        const signature = `sha256=${createHmac('sha256', SECRETS.code).update(body).digest('hex')}`;
        return {
          body,
          headers: {
            'x-hub-signature-256': signature,
            'x-code-event': event,
            'x-code-delivery': randomUUID(),
          },
        };
      };
      const succeeded = deploy('deployment.succeeded', 'dpl_1');
      expect(await webhook('deploy', succeeded.body, succeeded.headers)).toBe(200);
      expect(await webhook('deploy', succeeded.body, succeeded.headers)).toBe(200); // duplicate
      const other = deploy('deployment.promoted', 'dpl_2');
      expect(await webhook('deploy', other.body, other.headers)).toBe(200); // ignored
      const published = code('package', 'published');
      expect(await webhook('code', published.body, published.headers)).toBe(200);
      const run = code('workflow_run', 'completed');
      expect(await webhook('code', run.body, run.headers)).toBe(202); // queued, then drained
      await until('the queued event delivered', async () =>
        (await metrics()).sum('callbridge_webhook_queue_deliveries_total', { outcome: 'delivered' }),
      );
      // Unsigned and wrongly signed requests, until the address is limited.
      expect(await webhook('deploy', succeeded.body, { 'x-deploy-signature': 'ab'.repeat(20) })).toBe(403);
      for (let i = 0; i < 19; i++) expect(await webhook('deploy', succeeded.body, {})).toBe(401);
      expect(await webhook('deploy', succeeded.body, {})).toBe(429);
    }

    async function admin(method: string, path: string, body?: string, type = 'application/json') {
      const res = await fetch(`${server.baseUrl}/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body ? { 'content-type': type } : {}) },
        body,
      });
      expect(res.status, `${method} ${path}`).toBeLessThan(300);
      return (await res.json()) as { id: string; state: string };
    }

    /**
     * Two campaigns through the dialer, a fast fake carrier answering as the simulated callee's
     * number plan says: one runs to completion with every kind of outcome, one trips its breaker.
     */
    async function campaigns() {
      const run = async (campaign: object, csv: string) => {
        const { id } = await admin('POST', '/campaigns', JSON.stringify(campaign));
        await admin('POST', `/campaigns/${id}/contacts`, csv, 'text/csv');
        await admin('POST', `/campaigns/${id}/start`);
        return id;
      };
      await admin('POST', '/dnc', JSON.stringify({ numbers: ['+12125550130'] }));
      const mixed = await run(
        {
          name: 'every outcome',
          pacing: { callsPerSecond: 50, maxConcurrent: 10 },
          amd: { mode: 'voicemail', voicemail: { text: 'Sorry we missed you.' } },
        },
        'phone\n+12125550100\n+12125550130\n+12125550145\n+12125550150\n+12125550161\n+12125550175\n+12125550185\n+12125550195\n',
      );
      const failing = await run(
        {
          name: 'carrier failing',
          pacing: { callsPerSecond: 50, maxConcurrent: 10 },
          breaker: { failureShare: 0.5, windowSeconds: 60, minCalls: 3 },
        },
        `phone\n${Array.from({ length: 10 }, (_, i) => `+121255501${90 + i}`).join('\n')}\n`,
      );
      await until(
        'the first campaign to complete',
        async () => (await admin('GET', `/campaigns/${mixed}`)).state === 'completed',
      );
      await until(
        'the breaker to pause the second',
        async () => (await admin('GET', `/campaigns/${failing}`)).state === 'paused',
      );
      await until(
        'the breaker gauge',
        async () => (await metrics()).sum('callbridge_campaigns_paused_by_breaker') === 1,
      );
    }

    async function startPrometheus(target: string) {
      const dir = mkdtempSync(join(tmpdir(), 'callbridge-prometheus-'));
      dirs.push(dir);
      // The compose stack's own config, with only the intervals and the targets changed.
      const shipped = readFileSync(PROMETHEUS_CONFIG, 'utf8');
      const config = shipped
        .replace(/scrape_interval: 15s/, 'scrape_interval: 1s')
        .replace(/scrape_timeout: 10s/, 'scrape_timeout: 1s')
        .replace(/evaluation_interval: 15s/, 'evaluation_interval: 1s')
        .replace(/- targets: \[[^\]]*\]/, `- targets: ['${target}']`);
      expect(config.match(/: 1s$/gm)).toHaveLength(3);
      expect(config).toContain(`'${target}'`);
      writeFileSync(join(dir, 'prometheus.yml'), config);
      copyFileSync(ALERTS_FILE, join(dir, 'alerts.yml'));
      const port = await freePort();
      promUrl = `http://127.0.0.1:${port}`;
      prometheus = spawn(
        PROMETHEUS!,
        [
          `--config.file=${join(dir, 'prometheus.yml')}`,
          `--storage.tsdb.path=${join(dir, 'data')}`,
          `--web.listen-address=127.0.0.1:${port}`,
          '--log.level=warn',
        ],
        { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] },
      );
      prometheus.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
        prometheusLog = `${prometheusLog}${chunk}`.slice(-10_000);
      });
      const child = prometheus;
      // Two scrapes: enough samples for every rate over the window the panels use.
      await until(
        'Prometheus to scrape callbridge twice',
        async () => {
          if (child.exitCode !== null)
            throw new Error(`prometheus exited (${child.exitCode}):\n${prometheusLog}`);
          const res = await query('sum_over_time(up{job="callbridge"}[1m])').catch(() => null);
          return Number(res?.data.result[0]?.value[1] ?? 0) >= 2;
        },
        20_000,
      );
      await until('every rule evaluated once', async () => {
        const res = await api<{ groups: Array<{ rules: RuleInfo[] }> }>('/api/v1/rules');
        const rules = res.data.groups.flatMap((g) => g.rules);
        return rules.length > 0 && rules.every((rule) => rule.health !== 'unknown');
      });
    }

    beforeAll(async () => {
      agent = await startFakeAgent();
      carrier = new QuickCarrier();
      server = await startServer(
        {
          AGENT_URL: agent.url,
          AGENT_API_KEY: 'observability-test-key',
          REGION,
          WEBHOOK_SECRET_DEPLOY: SECRETS.deploy,
          WEBHOOK_SECRET_CODE: SECRETS.code,
          QUEUE_PILOTS: 'code',
          ADMIN_TOKEN,
          // Signed webhooks: only a verified one pre-warms its agent, whose use the dashboard shows.
          TWILIO_ACCOUNT_SID: `AC${'7'.repeat(32)}`,
          TWILIO_AUTH_TOKEN: TWILIO_TOKEN,
          TWILIO_API_URL: 'http://127.0.0.1:9',
        },
        { originator: carrier, dialerOptions: { idlePollMs: 20, gaugeEveryMs: 20 } },
      );
      carrier.dialer = server.app.callbridge.outbound.dialer;
      // The call session counts detection verdicts on outbound calls; here the fake carrier stands in.
      carrier.onVerdict = (verdict) =>
        server.app.callbridge.metrics.amdVerdicts.inc({ carrier: 'twilio', verdict });
      server.app.callbridge.gateway.startDrainer();
      // The shipped config labels each instance by its address without the port.
      instance = new URL(server.baseUrl).hostname;

      const firstAnswer = await conversation();
      await reconnectThenEndCall();
      await agentError();
      await declined();
      await replayedStream(firstAnswer);
      await agentRefused();
      await webhooks();
      await campaigns();
      await until('every call ended', async () => (await metrics()).sum('callbridge_calls_total') === 4);
      metricsText = await (await fetch(`${server.baseUrl}/metrics`)).text();

      await startPrometheus(new URL(server.baseUrl).host);
    }, 60_000);

    afterAll(async () => {
      const child = prometheus;
      if (child && child.exitCode === null) {
        const exited = once(child, 'exit');
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(timer);
      }
      carrier?.close();
      await server?.close();
      await agent?.close();
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    }, 20_000);

    it('serves /metrics that promtool check metrics accepts', () => {
      const result = run(PROMTOOL!, ['check', 'metrics'], metricsText);
      expect(result.output).toBe('');
      expect(result.status).toBe(0);
    });

    it('ships alert rules and a Prometheus config that promtool accepts', () => {
      const rules = run(PROMTOOL!, ['check', 'rules', ALERTS_FILE]);
      expect(rules.status, rules.output).toBe(0);
      const config = run(PROMTOOL!, ['check', 'config', PROMETHEUS_CONFIG]);
      expect(config.status, config.output).toBe(0);
    });

    it('exports every metric a dashboard, a variable or an alert names', () => {
      const { names } = parseExposition(metricsText);
      const named = new Set<string>();
      const collect = (text: string) => {
        for (const match of text.matchAll(/\bcallbridge_[a-z0-9_]+/g)) named.add(match[0]);
      };
      for (const file of DASHBOARD_FILES) {
        const dashboard = readDashboard(file);
        for (const { target } of panelTargets(dashboard)) collect(target.expr);
        for (const variable of dashboard.templating.list) collect(variableQuery(variable));
      }
      collect(readFileSync(ALERTS_FILE, 'utf8'));
      expect(named.size).toBeGreaterThan(20);
      expect([...named].filter((name) => !names.has(name))).toEqual([]);
    });

    it('labels every series with the configured region, as the template variables find it', async () => {
      for (const file of DASHBOARD_FILES) {
        for (const variable of readDashboard(file).templating.list) {
          const match = /^label_values\((.+), (\w+)\)$/.exec(variableQuery(variable));
          expect(match, variable.name).not.toBeNull();
          const selector = match![1]!.replaceAll('$region', REGION);
          const res = await api<Array<Record<string, string>>>('/api/v1/series', { 'match[]': selector });
          expect(res.status).toBe('success');
          const values = new Set(res.data.map((series) => series[match![2]!]));
          expect([...values]).toEqual([variable.name === 'region' ? REGION : instance]);
        }
      }
    });

    it.each(DASHBOARD_FILES)('answers every panel of %s with series from the scraped app', async (file) => {
      const problems: string[] = [];
      for (const { panel, target } of panelTargets(readDashboard(file))) {
        const expr = target.expr
          .replaceAll('$__rate_interval', RATE_INTERVAL)
          .replaceAll('$__interval', '1s')
          .replaceAll('$region', REGION)
          .replaceAll('$instance', instance);
        const res = await query(expr);
        if (res.status !== 'success')
          problems.push(`${panel.title} ${target.refId}: ${res.error}\n  ${expr}`);
        else if (res.data.result.length === 0)
          problems.push(`${panel.title} ${target.refId}: no series\n  ${expr}`);
      }
      expect(problems).toEqual([]);
    });

    it('shows in Prometheus what the calls and webhooks did', async () => {
      const byLabel = async (promql: string, label: string) => {
        const res = await query(promql);
        expect(res.status, res.error).toBe('success');
        return Object.fromEntries(res.data.result.map((r) => [r.metric[label] ?? '', Number(r.value[1])]));
      };
      const where = `region="${REGION}", instance="${instance}"`;
      expect(await byLabel(`sum by (reason) (callbridge_calls_total{${where}})`, 'reason')).toEqual({
        caller_hangup: 1,
        end_call: 1,
        agent_error: 1,
        agent_refused: 1,
      });
      expect(await byLabel(`sum(callbridge_barge_ins_total{${where}})`, '')).toEqual({ '': 1 });
      expect(await byLabel(`sum(callbridge_perceived_response_seconds_count{${where}})`, '')).toEqual({
        '': 1,
      });
      expect(
        await byLabel(`sum by (outcome) (callbridge_agent_reconnects_total{${where}})`, 'outcome'),
      ).toEqual({
        ok: 1,
      });
      expect(
        await byLabel(`sum by (function) (callbridge_function_calls_total{${where}})`, 'function'),
      ).toEqual({ unknown: 1, end_call: 1 });
      expect(await byLabel(`sum by (kind) (callbridge_agent_errors_total{${where}})`, 'kind')).toMatchObject({
        error: 1,
        warning: 1,
      });
      expect((await byLabel(`sum(callbridge_agent_refused_total{${where}})`, ''))['']).toBeGreaterThanOrEqual(
        1,
      );
      expect(
        await byLabel(`sum by (outcome) (callbridge_webhook_requests_total{${where}})`, 'outcome'),
      ).toEqual({
        forwarded: 2,
        duplicate: 1,
        ignored: 1,
        queued: 1,
        bad_signature: 20,
        rate_limited: 1,
      });
    });

    it('shows in Prometheus what the campaigns did', async () => {
      const byLabel = async (promql: string, label: string) => {
        const res = await query(promql);
        expect(res.status, res.error).toBe('success');
        return Object.fromEntries(res.data.result.map((r) => [r.metric[label] ?? '', Number(r.value[1])]));
      };
      const where = `region="${REGION}", instance="${instance}"`;
      const dials = await byLabel(`sum by (outcome) (callbridge_campaign_dials_total{${where}})`, 'outcome');
      expect(dials).toMatchObject({
        completed: 2,
        voicemail_left: 1,
        machine: 1,
        busy: 1,
        no_answer: 1,
        dnc: 1,
        cancelled: 0,
      });
      // One failure in the first campaign; the second paused after at least three.
      expect(dials.failed).toBeGreaterThanOrEqual(4);
      expect(await byLabel(`max(callbridge_campaigns_paused_by_breaker{${where}})`, '')).toEqual({ '': 1 });
      expect(await byLabel(`sum(callbridge_campaign_breaker_trips_total{${where}})`, '')).toEqual({ '': 1 });
      expect(await byLabel(`max by (state) (callbridge_campaigns{${where}})`, 'state')).toEqual({
        running: 0,
        paused: 1,
      });
      expect(await byLabel(`sum by (verdict) (callbridge_amd_verdicts_total{${where}})`, 'verdict')).toEqual({
        human: 1,
        unknown: 1,
        machine_end_beep: 1,
        fax: 1,
      });
    });

    it('evaluates every alert rule against the live series without error', async () => {
      const res = await api<{ groups: Array<{ rules: RuleInfo[] }> }>('/api/v1/rules');
      const rules = res.data.groups.flatMap((g) => g.rules);
      expect(rules.map((r) => r.name).sort()).toEqual(Object.keys(ALERT_SCENARIOS).sort());
      for (const rule of rules) {
        expect({ rule: rule.name, health: rule.health, error: rule.lastError ?? '' }).toEqual({
          rule: rule.name,
          health: 'ok',
          error: '',
        });
        expect(rule.type).toBe('alerting');
        expect(rule.duration, rule.name).toBeGreaterThan(0);
        expect(['critical', 'warning'], rule.name).toContain(rule.labels?.severity);
        expect(Object.keys(rule.annotations ?? {}).sort(), rule.name).toEqual(['description', 'summary']);
      }
    });

    it('fires each alert on the series it watches and stays quiet on healthy ones (promtool test rules)', async () => {
      const res = await api<{ groups: Array<{ rules: RuleInfo[] }> }>('/api/v1/rules');
      const rules = res.data.groups.flatMap((g) => g.rules);
      const tests = rules.flatMap((rule) => {
        const scenario = ALERT_SCENARIOS[rule.name]!;
        const labels = { ...scenario.labels, ...rule.labels };
        const annotations = Object.fromEntries(
          Object.entries(rule.annotations ?? {}).map(([key, template]) => [key, render(template, labels)]),
        );
        const test = (series: InputSeries[], expAlerts: unknown[]) => ({
          interval: '1m',
          input_series: series,
          alert_rule_test: [{ eval_time: '25m', alertname: rule.name, exp_alerts: expAlerts }],
        });
        return [
          test(scenario.firing, [{ exp_labels: labels, exp_annotations: annotations }]),
          test(scenario.healthy, []),
        ];
      });
      const dir = mkdtempSync(join(tmpdir(), 'callbridge-rule-tests-'));
      dirs.push(dir);
      // JSON is YAML: promtool reads it as a rule test file.
      const file = join(dir, 'alerts.test.yml');
      writeFileSync(file, JSON.stringify({ rule_files: [ALERTS_FILE], evaluation_interval: '1m', tests }));
      const result = run(PROMTOOL!, ['test', 'rules', file]);
      expect(result.output).toContain('SUCCESS');
      expect(result.status, result.output).toBe(0);
    });
  },
);

interface InputSeries {
  series: string;
  values: string;
}

/** Expands `{{ $labels.name }}`, the only template the alert annotations use. */
function render(template: string, labels: Record<string, string>): string {
  const out = template.replace(/\{\{\s*\$labels\.(\w+)\s*\}\}/g, (_, name: string) => labels[name] ?? '');
  if (out.includes('{{')) throw new Error(`annotation templates may use only $labels: ${template}`);
  return out;
}

const LABELS = 'job="callbridge", instance="callbridge:8080", region="eu"';
const s = (name: string, labels: string, values: string): InputSeries => ({
  series: `${name}{${LABELS}${labels ? `, ${labels}` : ''}}`,
  values,
});
const buckets = (counts: Record<string, string>) =>
  Object.entries(counts).map(([le, values]) =>
    s('callbridge_perceived_response_seconds_bucket', `le="${le}"`, values),
  );

/**
 * For each alert: one-minute samples that should fire it by minute 25, healthy ones that should
 * not, and the labels the firing alert carries besides its rule labels.
 */
const ALERT_SCENARIOS: Record<
  string,
  { firing: InputSeries[]; healthy: InputSeries[]; labels: Record<string, string> }
> = {
  CallbridgeDown: {
    firing: [{ series: 'up{job="callbridge", instance="callbridge:8080"}', values: '0x30' }],
    healthy: [{ series: 'up{job="callbridge", instance="callbridge:8080"}', values: '1x30' }],
    labels: { job: 'callbridge', instance: 'callbridge:8080' },
  },
  CallbridgeCallsFailingToConnect: {
    firing: [
      s('callbridge_calls_total', 'carrier="twilio", direction="inbound", reason="caller_hangup"', '0+9x30'),
      s(
        'callbridge_calls_total',
        'carrier="twilio", direction="inbound", reason="agent_unreachable"',
        '0+1x30',
      ),
    ],
    healthy: [
      s('callbridge_calls_total', 'carrier="twilio", direction="inbound", reason="caller_hangup"', '0+99x30'),
      s(
        'callbridge_calls_total',
        'carrier="twilio", direction="inbound", reason="agent_unreachable"',
        '0+1x30',
      ),
      // A call the agent dropped and could not resume is a failure, but not a failure to connect.
      s('callbridge_calls_total', 'carrier="twilio", direction="inbound", reason="agent_closed"', '0+20x30'),
    ],
    labels: { region: 'eu' },
  },
  CallbridgeAgentErrorRate: {
    firing: [
      s('callbridge_agent_errors_total', 'kind="error", code="SERVICE_UNAVAILABLE"', '0+1x30'),
      s('callbridge_agent_connect_duration_seconds_count', 'outcome="ready"', '0+10x30'),
    ],
    healthy: [
      s('callbridge_agent_errors_total', 'kind="warning", code="SLOW_SYNTHESIS"', '0+5x30'),
      s('callbridge_agent_errors_total', 'kind="error", code="SERVICE_UNAVAILABLE"', '0x30'),
      s('callbridge_agent_connect_duration_seconds_count', 'outcome="ready"', '0+10x30'),
    ],
    labels: { region: 'eu' },
  },
  CallbridgePerceivedLatencyHigh: {
    firing: buckets({
      '0.5': '0x30',
      '1': '0x30',
      '2': '0x30',
      '3': '0x30',
      '5': '0+10x30',
      '+Inf': '0+10x30',
    }),
    healthy: buckets({
      '0.5': '0+9x30',
      '1': '0+10x30',
      '2': '0+10x30',
      '3': '0+10x30',
      '5': '0+10x30',
      '+Inf': '0+10x30',
    }),
    labels: { region: 'eu' },
  },
  CallbridgeWebhookAuthFailureSpike: {
    firing: [s('callbridge_webhook_auth_failures_total', 'provider="deploy", reason="mismatch"', '0+10x30')],
    healthy: [s('callbridge_webhook_auth_failures_total', 'provider="deploy", reason="mismatch"', '0+1x30')],
    labels: { region: 'eu', provider: 'deploy' },
  },
  CallbridgeWebhookDeadLetters: {
    firing: [s('callbridge_webhook_dead_letters', '', '0x10 3x20')],
    healthy: [s('callbridge_webhook_dead_letters', '', '0x30')],
    labels: { region: 'eu' },
  },
  CallbridgeCampaignPausedByBreaker: {
    firing: [s('callbridge_campaigns_paused_by_breaker', '', '0x10 1x20')],
    healthy: [s('callbridge_campaigns_paused_by_breaker', '', '0x30')],
    labels: { region: 'eu' },
  },
  CallbridgeWebhookQueueStale: {
    firing: [s('callbridge_webhook_queue_oldest_age_seconds', '', '0+60x30')],
    healthy: [s('callbridge_webhook_queue_oldest_age_seconds', '', '5x30')],
    labels: { region: 'eu' },
  },
};
