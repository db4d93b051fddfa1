// What the configuration asks of a carrier. Each carrier reads its own variables in its own folder
// (src/carriers/<name>/config.ts) and is listed once (src/carriers/registry.ts); the loader runs
// the readers and applies the rules every carrier shares: secrets for the stream token key, and
// that production verifies what it serves.
import type { Env } from './env.js';

export interface CarrierReadContext {
  nodeEnv: string;
  /** Where relative paths in its variables resolve. */
  cwd: string;
}

export interface CarrierSettingsReader<S = unknown> {
  /** Its name: the key of its settings in the configuration, its routes, its media path. */
  readonly name: string;
  /** Its variables, checked: one ConfigError naming one variable on the first problem. */
  read(env: Env, context: CarrierReadContext): S;
  /** Whether any credential is set; a carrier with none is the simulated carrier's outside production. */
  hasCredentials(settings: S): boolean;
  /** Whether its requests can be verified with these settings. */
  verifies(settings: S): boolean;
  /** A secret every instance already shares, to derive the stream token key from; null: none. */
  sharedSecret(settings: S): string | null;
  /** The variables that make its requests verified, the one a refusal names last. */
  readonly verifiedBy: readonly string[];
}
