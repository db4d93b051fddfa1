// The configuration with every carrier's settings: what the process, the CLI and the doctor load.
import type { Env } from '../config/env.js';
import { type LoadOptions, loadConfigFor } from '../config/load.js';
import type { Config } from '../config/types.js';
import type { Carrier } from './carrier.js';
import { CARRIERS } from './registry.js';

export function loadConfig(
  env: Env,
  opts: LoadOptions = {},
  carriers: readonly Carrier[] = CARRIERS,
): Config {
  return loadConfigFor(carriers, env, opts);
}
