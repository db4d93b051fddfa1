// Secrets leased at start from the environment and a JSON secrets file (the file's list replaces
// the environment's for every name it holds), reloaded at runtime with the map swapped whole, so
// requests in flight finish and a bad file keeps the old secrets (docs/protocols/webhook-providers.md section 3).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/metrics/metrics.js';
import { openSqliteStore } from '../../src/store/sqlite.js';
import { webhookGateway } from '../../src/webhooks/plugin.js';
import {
  type FakeOperatorGateway,
  type GatewayApp,
  gatewayConfig,
  hmacOf,
  startFakeOperatorGateway,
  startGatewayApp,
} from './helpers.js';

const tasksBody = JSON.stringify({ event_name: 'item:added' });
const tasksWith = (secret: string, body = tasksBody) => ({
  'x-tasks-hmac-sha256': hmacOf('sha256', secret, body).toString('base64'),
});
const deployBody = JSON.stringify({ id: 'e-1', type: 'deployment.created' });
const deployWith = (secret: string) => ({
  'x-deploy-signature': hmacOf('sha1', secret, deployBody).toString('hex'),
});

describe('webhook secrets', () => {
  let dir: string;
  let file: string;
  let gw: GatewayApp | undefined;
  let operator: FakeOperatorGateway;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'callbridge-secrets-'));
    file = join(dir, 'secrets.json');
    operator = await startFakeOperatorGateway();
  });
  afterEach(async () => {
    await gw?.close();
    gw = undefined;
    await operator.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const start = (env: Record<string, string> = {}) =>
    startGatewayApp({
      env: {
        WEBHOOK_SECRET_TASKS: 'env-tasks',
        WEBHOOK_SECRET_DEPLOY: 'env-deploy',
        SECRETS_FILE: file,
        OPERATOR_GATEWAY_URL: operator.url,
        ...env,
      },
    });
  const tasks = (headers: Record<string, string>, body = tasksBody) =>
    gw!.app.inject({ method: 'POST', url: '/webhooks/tasks', headers, payload: body });
  const deploy = (secret: string) =>
    gw!.app.inject({
      method: 'POST',
      url: '/webhooks/deploy',
      headers: deployWith(secret),
      payload: deployBody,
    });

  it("replaces the environment's secrets for the names the file holds and keeps the others", async () => {
    writeFileSync(file, JSON.stringify({ tasks: ['file-tasks-1', 'file-tasks-2'] }));
    gw = await start();
    expect((await tasks(tasksWith('file-tasks-2'))).statusCode).toBe(200);
    expect((await tasks(tasksWith('env-tasks'))).statusCode).toBe(403);
    expect((await deploy('env-deploy')).statusCode).toBe(200);
  });

  it('reloads the file at runtime: the new secret is accepted, the removed one refused', async () => {
    writeFileSync(file, JSON.stringify({ tasks: ['before'] }));
    gw = await start();
    expect((await tasks(tasksWith('before'))).statusCode).toBe(200);
    writeFileSync(file, JSON.stringify({ tasks: ['after'] }));
    await gw.gateway.reload();
    const body = JSON.stringify({ event_name: 'item:completed' });
    expect((await tasks(tasksWith('after', body), body)).statusCode).toBe(200);
    expect((await tasks(tasksWith('before', body), body)).statusCode).toBe(403);
  });

  it('finishes a request in flight across a reload', async () => {
    writeFileSync(file, JSON.stringify({ tasks: ['before'] }));
    gw = await start();
    operator.hold();
    const inFlight = tasks(tasksWith('before'));
    await operator.waitForRequests(1);
    writeFileSync(file, JSON.stringify({ tasks: ['after'] }));
    await gw.gateway.reload();
    operator.release();
    expect((await inFlight).json()).toEqual({ status: 'forwarded', event: 'tasks/task.created' });
  });

  it('starts serving payments once a reload gives it a secret', async () => {
    writeFileSync(file, JSON.stringify({}));
    gw = await start({ WEBHOOK_SECRET_PAYMENTS: '' });
    expect((await gw.gateway.info()).providers).not.toContain('payments');
    writeFileSync(file, JSON.stringify({ payments: ['whsec_new'] }));
    await gw.gateway.reload();
    expect((await gw.gateway.info()).providers).toContain('payments');
    const body = JSON.stringify({ id: 'evt_1', type: 'invoice.paid' });
    const t = Math.floor(Date.now() / 1000);
    const header = `t=${t},v1=${hmacOf('sha256', 'whsec_new', `${t}.${body}`).toString('hex')}`;
    const res = await gw.app.inject({
      method: 'POST',
      url: '/webhooks/payments',
      headers: { 'payments-signature': header },
      payload: body,
    });
    expect(res.statusCode).toBe(200);
  });

  it('keeps the previous secrets when the reloaded file is invalid, without rejecting', async () => {
    writeFileSync(file, JSON.stringify({ tasks: ['before'] }));
    gw = await start();
    writeFileSync(file, '{ "tasks": [');
    await expect(gw.gateway.reload()).resolves.toBeUndefined();
    expect((await tasks(tasksWith('before'))).statusCode).toBe(200);
  });

  it.each([
    ['not JSON', '{', 'not valid JSON'],
    ['an unknown name', JSON.stringify({ pager: ['x'] }), 'unknown field "pager"'],
    [
      'a string instead of a list',
      JSON.stringify({ tasks: 'x' }),
      'field "tasks" must be an array of non-empty strings',
    ],
    ['an empty secret', JSON.stringify({ code: [''] }), 'field "code" must be an array of non-empty strings'],
  ])('refuses to start with a secrets file holding %s, naming the file and field', (_what, text, message) => {
    writeFileSync(file, text);
    const store = openSqliteStore({ file: join(dir, 'x.db') });
    const build = () =>
      webhookGateway({
        config: gatewayConfig({ SECRETS_FILE: file }),
        store,
        metrics: createMetrics('global'),
        logger: pino({ level: 'silent' }),
      });
    expect(build).toThrow(
      expect.objectContaining({
        code: 'CALLBRIDGE_CONFIG_INVALID',
        message: expect.stringContaining(message),
      }),
    );
    expect(build).toThrow(expect.objectContaining({ message: expect.stringContaining(file) }));
    void store.close();
  });

  it('refuses to start when the secrets file cannot be read', () => {
    const store = openSqliteStore({ file: join(dir, 'x.db') });
    const build = () =>
      webhookGateway({
        config: gatewayConfig({ SECRETS_FILE: join(dir, 'missing.json') }),
        store,
        metrics: createMetrics('global'),
        logger: pino({ level: 'silent' }),
      });
    expect(build).toThrow(
      expect.objectContaining({
        code: 'CALLBRIDGE_CONFIG_INVALID',
        message: expect.stringContaining('SECRETS_FILE'),
      }),
    );
    void store.close();
  });
});
