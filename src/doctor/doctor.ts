// `callbridge doctor`: configuration, secrets and reachability of the configured hosts, as lines
// (README.md "Commands"). A pure function of an environment and a folder, like the
// configuration itself; the probes run side by side, each bounded by its own timeout.
import type { Carrier } from '../carriers/carrier.js';
import type { Env } from '../config/env.js';
import { loadConfig } from '../carriers/load-config.js';
import type { Config } from '../config/types.js';
import { probeAgent } from './probe-agent.js';
import { carrierChecks } from './probe-carriers.js';
import { modelChecks } from './probe-models.js';
import { probeSpeechApi } from './probe-http.js';
import { probeRedis } from './probe-redis.js';
import { probeTcp } from './probe-tcp.js';
import { redactLines } from './redact.js';
import { type CheckLine, fail, mergeUnreachable, ok } from './report.js';
import { adminTokenLine, agentKeyLine, gatewaySecretLine, webhookSecretsLine } from './secrets.js';

export const DEFAULT_CHECK_TIMEOUT_MS = 3000;

export interface DoctorOptions {
  /** Where relative CONFIG_DIR and DATA_DIR resolve; default the process's working directory. */
  cwd?: string;
  /** Bound on each network check. */
  timeoutMs?: number;
  /** The carriers' list; default src/carriers/registry.ts's. */
  carriers?: readonly Carrier[];
}

export async function runDoctor(env: Env, opts: DoctorOptions = {}): Promise<CheckLine[]> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_CHECK_TIMEOUT_MS;
  let config: Config;
  try {
    config = loadConfig(env, opts.cwd === undefined ? {} : { cwd: opts.cwd }, opts.carriers);
  } catch (err) {
    // Nothing else can be checked against a configuration that does not load.
    return redactLines([fail(`configuration: ${(err as Error).message}`)], env);
  }
  const groups = await Promise.all([
    [configurationLine(config)],
    agentChecks(config, timeoutMs),
    carrierChecks(config, timeoutMs, opts.carriers),
    [adminTokenLine(config), webhookSecretsLine(config)],
    stateCheck(config, timeoutMs),
    gatewayChecks(config, timeoutMs),
    modelChecks(config, timeoutMs),
  ]);
  return redactLines(mergeUnreachable(groups.flat()), env);
}

function configurationLine(config: Config): CheckLine {
  const profiles = Object.keys(config.profiles).length;
  return ok(
    `configuration loads (region ${config.region}, ${profiles} agent profile${profiles === 1 ? '' : 's'} ` +
      `in ${config.configDir})`,
  );
}

async function agentChecks(config: Config, timeoutMs: number): Promise<CheckLine[]> {
  if (config.agent.url === null) {
    return [ok('voice agent: no AGENT_URL, so calls use the built-in local voice agent')];
  }
  const [agent, speechApi] = await Promise.all([
    probeAgent(config.agent, timeoutMs),
    probeSpeechApi(config.agent, timeoutMs),
  ]);
  return [agentKeyLine(config)!, agent, speechApi];
}

async function stateCheck(config: Config, timeoutMs: number): Promise<CheckLine[]> {
  if (config.redisUrl === null)
    return [ok(`state: embedded SQLite in ${config.dataDir} (REDIS_URL not set)`)];
  return [await probeRedis(config.redisUrl, timeoutMs)];
}

async function gatewayChecks(config: Config, timeoutMs: number): Promise<CheckLine[]> {
  const url = config.webhooks.operatorGatewayUrl;
  if (url === null) return [ok('operator gateway: OPERATOR_GATEWAY_URL not set, so events are logged only')];
  const secret = gatewaySecretLine(config);
  const reach = await probeTcp('operator gateway', url, timeoutMs);
  return secret === undefined ? [reach] : [reach, secret];
}
