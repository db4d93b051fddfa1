// The validated configuration: a pure function of the environment and the config folder
// (see load.ts). Everything downstream reads this, never process.env.

export const REGIONS = ['global', 'eu', 'au', 'in'] as const;
export type Region = (typeof REGIONS)[number];

/** One region's hosts (config/regions.json). */
export interface RegionHosts {
  /** Voice agent host, `ws`/`wss`, no path. On a regional deployment this is the regional API host. */
  agentUrl: string;
  /** Speech REST host for this region (token grant, speak, read, models). */
  speechApiUrl: string;
  /** Management calls (projects, keys) always go to the global API host. */
  managementApiUrl: string;
}

export interface SpeakProvider {
  type: string;
  /** `v1` needs a `lyric-` model, `v2` a `turn-` model (speech-service spec 4.5, 9.5). */
  version: 'v1' | 'v2';
  model: string;
  [extra: string]: unknown;
}

export interface ProviderSpec {
  type: string;
  model?: string;
  [extra: string]: unknown;
}

/** A function the agent may call, run by callbridge over HTTP (issue: call control). */
export interface HttpFunction {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  url: string;
  /** HMAC-SHA256 key for the `X-Callbridge-Signature` header sent with each call. */
  secret?: string;
  timeoutMs: number;
}

export interface AgentProfile {
  name: string;
  language: string;
  prompt: string;
  greeting?: string;
  listen?: { provider: ProviderSpec };
  think: { provider: ProviderSpec; endpoint?: Record<string, unknown> };
  /** Absent: the agent's default voice, `turn-kit-en`. */
  speak?: { provider: SpeakProvider };
  /** Built-in client-side functions the profile enables. */
  builtins: {
    endCall: boolean;
    /** Numbers (E.164) or `sip:` addresses `transfer_call` may dial; empty disables transfer. */
    transferAllowList: string[];
  };
  httpFunctions: HttpFunction[];
  dtmf: {
    enabled: boolean;
    interDigitTimeoutMs: number;
    terminator: string;
    maxDigits: number;
  };
  limits: {
    /** Caller silence after which the agent is prompted to check in; 0 disables. */
    silencePromptMs: number;
    /** Caller silence after which the call ends politely; 0 disables. */
    silenceHangupMs: number;
    /** Longest call; 0 disables. */
    maxCallMs: number;
  };
  fallback: {
    /** Pre-rendered μ-law 8 kHz audio played when no agent can be reached. */
    audioFile?: string;
    /** Number to transfer to when no agent can be reached. */
    transferTo?: string;
  };
  tags: string[];
}

export interface NumberRouting {
  /** Profile for a called number that has no entry. */
  default: string;
  /** Called number in E.164 → profile name. */
  routes: Record<string, string>;
}

/** The codecs a Telnyx media stream may carry both ways. */
export type TelnyxStreamCodec = 'PCMU' | 'PCMA' | 'L16';

/** Telnyx (docs/protocols/telnyx.md section 1), read by telnyx.ts. */
export interface TelnyxConfig {
  apiKey: string | null;
  /** Base64 Ed25519 public keys (32 bytes each); several while a key is rotated. Empty: not verified. */
  publicKeys: string[];
  connectionId: string | null;
  apiUrl: string;
  streamCodec: TelnyxStreamCodec;
  /** NODE_ENV=production without a public key: every Telnyx webhook is refused. */
  refuseUnverified: boolean;
}

/** Plivo (docs/protocols/plivo.md section 1), read by plivo.ts. */
export interface PlivoConfig {
  authId: string | null;
  authToken: string | null;
  apiUrl: string;
  /** NODE_ENV=production without an auth token: every Plivo request is refused. */
  refuseUnverified: boolean;
}

export type AgentAuth = 'key' | 'grant';

export interface Config {
  port: number;
  host: string;
  /** Base URL carriers reach this server at, without a trailing slash. */
  publicUrl: string;
  region: Region;
  nodeEnv: string;
  logLevel: string;
  agent: {
    /** `null`: the built-in local agent runs in-process (see sim/). */
    url: string | null;
    apiKey: string | null;
    auth: AgentAuth;
    speechApiUrl: string;
    managementApiUrl: string;
    connectTimeoutMs: number;
    /** Dial the agent while answering the voice webhook, so it is ready when the stream arrives. */
    prewarm: boolean;
    /** How long a pre-warmed session waits for its media stream before it is closed. */
    prewarmTtlMs: number;
  };
  configDir: string;
  dataDir: string;
  redisUrl: string | null;
  /** Prefix of every Redis key (`REDIS_KEY_PREFIX`); instances sharing state share it. Default `callbridge:`. */
  redisKeyPrefix?: string;
  twilio: {
    accountSid: string | null;
    authToken: string | null;
    apiUrl: string;
  };
  /** Key for stream tokens; several instances behind one number must share it. */
  streamTokenSecret: string;
  streamTokenTtlMs: number;
  webhooks: {
    /** Provider name → active secrets (several during rotation). */
    secrets: Record<string, string[]>;
    queuePilots: string[];
    operatorGatewayUrl: string | null;
    /** HMAC-SHA256 key for `X-Callbridge-Signature` on forwarded events (`OPERATOR_GATEWAY_SECRET`). */
    operatorGatewaySecret?: string | null;
    bodyLimitBytes: number;
    secretsFile: string | null;
  };
  /** Fastify `trustProxy`: addresses or CIDRs, or false. */
  trustProxy: string[] | false;
  telnyx: TelnyxConfig;
  plivo: PlivoConfig;
  adminToken: string | null;
  drainTimeoutMs: number;
  maxCalls: number;
  /** Where declined calls (draining, at capacity) are redirected; null: told to call back and hung up. */
  declineRedirectUrl: string | null;
  /** How often carrier media sockets are pinged; one missed pong and the socket is cut. */
  carrierPingIntervalMs: number;
  regions: Record<Region, RegionHosts>;
  profiles: Record<string, AgentProfile>;
  numbers: NumberRouting;
}
