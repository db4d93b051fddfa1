// Which secrets are set where the configuration needs them. Only names and counts are reported,
// never a value. (A missing secret that stops the server, such as AGENT_API_KEY beside AGENT_URL,
// fails loading already; these lines cover the ones it starts without.)
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ADMIN_TOKEN_FILE, readAdminTokenFile } from '../admin/token-file.js';
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

/**
 * Without ADMIN_TOKEN the server makes a token file in DATA_DIR at its first start and uses it (the
 * CLI reads it too): the admin API is on either way, so this is never a warning by itself.
 */
export function adminTokenLine(config: Config): CheckLine {
  if (config.adminToken !== null) return ok('ADMIN_TOKEN is set: the /v1 admin API uses it');
  const path = join(config.dataDir, ADMIN_TOKEN_FILE);
  if (!existsSync(path)) {
    return ok(`ADMIN_TOKEN is not set: the server creates ${path} at its first start and uses it`);
  }
  try {
    const file = readAdminTokenFile(path);
    if (file.exposed) return warn(`the admin token file ${path} is readable by other users: chmod 600 it`);
    return ok(`ADMIN_TOKEN is not set: the server and the CLI use the token in ${path}`);
  } catch (err) {
    return fail(`admin token file: ${(err as Error).message}`);
  }
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
    // Named as the gateway, so a reader setting up calls can tell it is not a carrier's (README).
    return ok(
      `webhook secrets: none configured (${missing.join(', ')} reject every request to the ` +
        'webhook gateway, POST /webhooks/:provider, for events of other tools, not calls)',
    );
  }
  const listed = configured.map((name) => `${name} (${plural(counts.get(name)!, 'secret')})`).join(', ');
  const rest =
    missing.length > 0 ? `; not configured: ${missing.join(', ')} (they reject every request)` : '';
  return ok(`webhook secrets: configured for ${listed}${rest}`);
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}
