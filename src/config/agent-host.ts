// Which voice agent a call talks to. An explicit AGENT_URL wins; an API key or an explicit REGION
// means the region's hosted agent; with neither, the built-in local agent runs in-process so a
// fresh checkout can take a simulated call with no account.
import { type Env, envError, envInt, envOneOf, envString, envUrl } from './env.js';
import type { AgentAuth, Config, Region, RegionHosts } from './types.js';
import { BASE_URL, HOST_URL } from './urls.js';

const AGENT_AUTHS: readonly AgentAuth[] = ['key', 'grant'];

/**
 * An agent on this machine is `callbridge sim` (or a local stand-in), which serves the speech REST
 * subset on its own port: the speech API is looked for there, not at the region's host, unless
 * SPEECH_API_URL says otherwise.
 */
export function localSpeechApi(agentUrl: string): string | undefined {
  const url = new URL(agentUrl);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const loopback = host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
  if (!loopback) return undefined;
  return `${url.protocol === 'wss:' ? 'https' : 'http'}://${url.host}`;
}

export function selectAgent(env: Env, region: Region, regions: Record<Region, RegionHosts>): Config['agent'] {
  const explicitUrl = envUrl(env, 'AGENT_URL', HOST_URL(['ws', 'wss']));
  const apiKey = envString(env, 'AGENT_API_KEY') ?? null;
  const regionExplicit = envString(env, 'REGION') !== undefined;
  const auth = envOneOf(env, 'AGENT_AUTH', AGENT_AUTHS, 'key');
  const connectTimeoutMs = envInt(env, 'AGENT_CONNECT_TIMEOUT_MS', { fallback: 5000, min: 1, max: 60_000 });
  const prewarm = envOneOf(env, 'AGENT_PREWARM', ['true', 'false'], 'true') === 'true';
  const prewarmTtlMs = envInt(env, 'AGENT_PREWARM_TTL_MS', { fallback: 15_000, min: 1, max: 120_000 });
  const speechApiOverride = envUrl(env, 'SPEECH_API_URL', BASE_URL(['http', 'https']));
  const hosts = regions[region];

  let url: string | null = null;
  if (explicitUrl !== undefined) {
    if (apiKey === null) throw envError('AGENT_API_KEY', 'required when AGENT_URL is set');
    url = explicitUrl;
  } else if (apiKey !== null || regionExplicit) {
    if (apiKey === null) {
      throw envError(
        'AGENT_API_KEY',
        `required when REGION is set (calls go to ${hosts.agentUrl}); unset REGION to use the built-in local agent`,
      );
    }
    url = hosts.agentUrl;
  }

  const speechApiUrl =
    speechApiOverride ??
    (explicitUrl === undefined ? undefined : localSpeechApi(explicitUrl)) ??
    hosts.speechApiUrl;
  return {
    url,
    apiKey,
    auth,
    speechApiUrl,
    // On the global region the speech API host is the global API host, so an override moves both;
    // regional deployments keep management calls on the global host (docs/protocols/speech-service.md section 1).
    managementApiUrl:
      region === 'global' ? (speechApiOverride ?? hosts.managementApiUrl) : hosts.managementApiUrl,
    connectTimeoutMs,
    prewarm,
    prewarmTtlMs,
  };
}
