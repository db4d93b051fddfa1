// Error messages reach logs and terminals: they name a secret variable but never print its value.
import { describe, expect, it } from 'vitest';
import { envError } from '../../src/config/env.js';
import { configErrorOf, load, loadProfile } from './project.js';

const SID = `AC${'0123456789abcdef'.repeat(2)}`;
const SECRETS = {
  AGENT_API_KEY: 'secret-agent-key-1111',
  TWILIO_AUTH_TOKEN: 'secret-twilio-token-2222',
  ADMIN_TOKEN: 'secret-admin-3333',
  STREAM_TOKEN_SECRET: 'secret-stream-4444',
  OPERATOR_GATEWAY_SECRET: 'secret-operator-4545',
  WEBHOOK_SECRET_TASKS: 'secret-tasks-5555',
  WEBHOOK_SECRET_INBOX: 'secret-inbox-6666',
  WEBHOOK_SECRET_INBOX_RULES: 'secret-rules-7777',
  WEBHOOK_SECRET_DEPLOY: 'secret-deploy-8888',
  WEBHOOK_SECRET_CODE: 'secret-code-9999',
  WEBHOOK_SECRET_PAYMENTS: 'secret-payments-0000',
};

function expectNoSecret(message: string): void {
  for (const value of Object.values(SECRETS)) expect(message).not.toContain(value);
  expect(message).not.toContain('secret-');
}

describe('secret values in error messages', () => {
  it.each([
    [
      'ADMIN_TOKEN too short',
      { ...SECRETS, TWILIO_ACCOUNT_SID: SID, ADMIN_TOKEN: 'secret-short' },
      'ADMIN_TOKEN',
    ],
    ['auth token without SID', { TWILIO_AUTH_TOKEN: SECRETS.TWILIO_AUTH_TOKEN }, 'TWILIO_ACCOUNT_SID'],
    ['a bad AGENT_URL', { ...SECRETS, TWILIO_ACCOUNT_SID: SID, AGENT_URL: 'https://x' }, 'AGENT_URL'],
    ['a bad port', { ...SECRETS, TWILIO_ACCOUNT_SID: SID, PORT: 'x' }, 'PORT'],
    ['a bad region with a key', { ...SECRETS, TWILIO_ACCOUNT_SID: SID, REGION: 'mars' }, 'REGION'],
  ])('leaves them out on %s', (_case, env, variable) => {
    const message = configErrorOf(() => load(env)).message;
    expect(message.startsWith(`${variable}: `)).toBe(true);
    expectNoSecret(message);
  });

  it('never quotes the value of a secret variable', () => {
    for (const name of Object.keys(SECRETS)) {
      expect(envError(name, 'is wrong', 'secret-value').message).toBe(`${name}: is wrong`);
    }
    expect(envError('PORT', 'is wrong', '80a').message).toBe('PORT: is wrong, got "80a"');
  });

  it('leaves a function secret out of a profile error', () => {
    const root = { prompt: 'p', think: { provider: { type: 'open_ai' } } };
    const fn = { name: 'f', description: 'd', url: 'https://f.example.com' };
    // A number where a string belongs: the message must not quote it.
    const message = configErrorOf(() =>
      loadProfile({ ...root, functions: [{ ...fn, secret: 987654321 }] }),
    ).message;
    expect(message).toBe('config/agents/default.json: /functions/0/secret: must be a string');
  });
});
