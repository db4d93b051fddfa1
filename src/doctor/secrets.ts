// Which secrets are set where the configuration needs them. Only names and counts are reported,
// never a value. (A missing secret that stops the server, such as AGENT_API_KEY beside AGENT_URL,
// fails loading already; these lines cover the ones it starts without.)
import { readFileSync } from 'node:fs';
import { WEBHOOK_SECRET_VARS } from '../config/load.js';
import type { Config } from '../config/types.js';
import { parseSecretsFile } from '../webhooks/secrets.js';
import { type CheckLine, fail, ok, warn } from './report.js';

/** Only when an agent host is configured: the local agent needs no key. */
export function agentKeyLine(config: Config): CheckLine | undefined {
  if (config.agent.url === null) return undefined;
  const how = config.agent.auth === 'grant' ? 'minting a grant per call' : 'sent as Authorization: Token';
  return ok(`AGENT_API_KEY is set (${how})`);
}

export function twilioCredentialsLine(config: Config): CheckLine {
  if (config.twilio.authToken !== null) {
    return ok('TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN are set: carrier requests are verified');
  }
  return warn(
    'TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN are not set: carrier requests are not verified ' +
      '(NODE_ENV=production refuses to start without them)',
  );
}

export function adminTokenLine(config: Config): CheckLine {
  return config.adminToken === null
    ? warn('ADMIN_TOKEN is not set: the /v1 admin API is off')
    : ok('ADMIN_TOKEN is set: the /v1 admin API is on');
}

/** Only when events are forwarded without a signing key. */
export function gatewaySecretLine(config: Config): CheckLine | undefined {
  const { operatorGatewayUrl, operatorGatewaySecret } = config.webhooks;
  if (operatorGatewayUrl === null || operatorGatewaySecret) return undefined;
  return warn('OPERATOR_GATEWAY_SECRET is not set: events go to the operator gateway unsigned');
}

/** One line: which providers have secrets (and how many, for rotation) and which reject everything. */
export function webhookSecretsLine(config: Config): CheckLine {
  const providers = Object.keys(WEBHOOK_SECRET_VARS);
  const counts = new Map<string, number>();
  for (const [name, list] of Object.entries(config.webhooks.secrets)) counts.set(name, list.length);
  const file = config.webhooks.secretsFile;
  if (file !== null) {
    // The file's list replaces the environment's for every name it holds (webhooks/secrets.ts).
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      return fail(`SECRETS_FILE: cannot read ${file} (${(err as NodeJS.ErrnoException).code})`);
    }
    try {
      for (const [name, list] of parseSecretsFile(file, text, providers)) counts.set(name, list.length);
    } catch (err) {
      // The message names the file and field, never a secret (webhooks/secrets.ts).
      return fail(`SECRETS_FILE: ${(err as Error).message}`);
    }
  }
  const configured = providers.filter((name) => (counts.get(name) ?? 0) > 0);
  const missing = providers.filter((name) => (counts.get(name) ?? 0) === 0);
  if (configured.length === 0) {
    return ok(`webhook secrets: none configured (${missing.join(', ')} reject every request)`);
  }
  const listed = configured.map((name) => `${name} (${plural(counts.get(name)!, 'secret')})`).join(', ');
  const rest =
    missing.length > 0 ? `; not configured: ${missing.join(', ')} (they reject every request)` : '';
  return ok(`webhook secrets: configured for ${listed}${rest}`);
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}
