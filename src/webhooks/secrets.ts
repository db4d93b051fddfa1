// Webhook secrets, leased at start (docs/protocols/webhook-providers.md section 3: secrets are leased when the
// process starts) from the environment (WEBHOOK_SECRET_*) and an optional JSON secrets file
// (SECRETS_FILE), shaped `{ "tasks": ["s1", "s2"], "inbox_rules": ["r1"], … }`.
//
// Merge rule: for every name the file holds, the file's list replaces the environment's (an empty
// list there disables the name); names the file leaves out keep their environment secrets. Several
// secrets per name are all accepted, for rotation.
//
// `reload()` (SIGHUP) re-reads the file and swaps the whole map in one assignment: a request that
// already took a snapshot finishes with it, the next one sees the new map. A bad file on reload is
// logged and the previous secrets stay.
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { Logger } from 'pino';
import { ConfigError } from '../errors.js';
import type { SecretLookup } from './provider.js';

type SecretMap = ReadonlyMap<string, readonly string[]>;

export interface WebhookSecretsOptions {
  /** From config.webhooks.secrets (the environment). */
  fromEnv: Record<string, string[]>;
  file: string | null;
  /** Names a file may hold; anything else is a mistake worth stopping for. */
  knownNames: readonly string[];
  logger: Logger;
}

/** Validates a secrets file's JSON; throws ConfigError naming the file and field. */
export function parseSecretsFile(
  file: string,
  text: string,
  knownNames: readonly string[],
): Map<string, string[]> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ConfigError(`${file}: not valid JSON`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError(`${file}: must be a JSON object of provider name to a list of secrets`);
  }
  const secrets = new Map<string, string[]>();
  for (const [name, value] of Object.entries(parsed)) {
    if (!knownNames.includes(name)) {
      throw new ConfigError(`${file}: unknown field "${name}" (expected one of ${knownNames.join(', ')})`);
    }
    if (!Array.isArray(value) || !value.every((s) => typeof s === 'string' && s.length > 0)) {
      throw new ConfigError(`${file}: field "${name}" must be an array of non-empty strings`);
    }
    secrets.set(name, [...new Set(value as string[])]);
  }
  return secrets;
}

function merge(fromEnv: Record<string, string[]>, fromFile: Map<string, string[]>): SecretMap {
  const merged = new Map<string, readonly string[]>();
  for (const [name, list] of Object.entries(fromEnv)) merged.set(name, Object.freeze([...list]));
  for (const [name, list] of fromFile) merged.set(name, Object.freeze(list));
  return merged;
}

export class WebhookSecrets {
  readonly #options: WebhookSecretsOptions;
  #current: SecretMap;

  /** Reads the file synchronously: a bad file stops the process before it listens. */
  constructor(options: WebhookSecretsOptions) {
    this.#options = options;
    let fromFile = new Map<string, string[]>();
    if (options.file) {
      let text: string;
      try {
        text = readFileSync(options.file, 'utf8');
      } catch (err) {
        throw new ConfigError(
          `SECRETS_FILE: cannot read ${options.file} (${(err as NodeJS.ErrnoException).code})`,
        );
      }
      fromFile = parseSecretsFile(options.file, text, options.knownNames);
    }
    this.#current = merge(options.fromEnv, fromFile);
  }

  /** The map as of now; lookups through it never change under a request. */
  snapshot(): SecretLookup {
    const map = this.#current;
    return (name) => map.get(name) ?? [];
  }

  has(name: string): boolean {
    return (this.#current.get(name)?.length ?? 0) > 0;
  }

  /** Re-reads the secrets file. Never rejects: a failure is logged and the old secrets stay. */
  async reload(): Promise<void> {
    const { file, fromEnv, knownNames, logger } = this.#options;
    if (!file) {
      logger.info('webhook secrets: no secrets file configured, nothing to reload');
      return;
    }
    try {
      const next = merge(fromEnv, parseSecretsFile(file, await readFile(file, 'utf8'), knownNames));
      this.#current = next;
      logger.info({ names: [...next.keys()].filter((name) => this.has(name)) }, 'webhook secrets reloaded');
    } catch (err) {
      const message =
        err instanceof ConfigError ? err.message : `cannot read ${file}: ${(err as Error).message}`;
      logger.error({ reason: message }, 'webhook secrets reload failed; the previous secrets stay active');
    }
  }
}
