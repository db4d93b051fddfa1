// The validated configuration: a pure function of the environment and the config folder
// (see load.ts). Everything downstream reads this, never process.env.
import type { SpeechConfig } from './speech.js';
import type { DialPolicyConfig, FetchPolicyConfig } from './trust-policies.js';
import type { RecordingSettings, RecordingStoreConfig } from './recording.js';

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
  /** `v1` needs a `lyric-` model, `v2` a `turn-` model (docs/protocols/agent.md section 4.2). */
  version: 'v1' | 'v2';
  model: string;
  [extra: string]: unknown;
}

export interface ProviderSpec {
  type: string;
  model?: string;
  [extra: string]: unknown;
}

/** One think provider of a profile; a profile lists one or more, in fallback order. */
export interface ThinkSpec {
  provider: ProviderSpec;
  endpoint?: Record<string, unknown>;
}

/** One speak provider of a profile; a profile lists one or more, in fallback order. */
export interface SpeakSpec {
  provider: SpeakProvider;
  endpoint?: Record<string, unknown>;
}

/** Agent reconfigurations a profile function may ask for in its answer (`UpdateSpeak`…). */
export type AgentUpdateKind = 'speak' | 'think' | 'listen';

/** A function the agent may call, run by callbridge over HTTP (issue: call control). */
export interface HttpFunction {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  url: string;
  /** HMAC-SHA256 key for the `X-Callbridge-Signature` header sent with each call. */
  secret?: string;
  timeoutMs: number;
  /** Updates this function's answer may request (`{"update": {"speak": …}}`); empty: none. */
  mayUpdate?: AgentUpdateKind[];
}

export interface AgentProfile {
  name: string;
  language: string;
  prompt: string;
  greeting?: string;
  listen?: { provider: ProviderSpec };
  /** One or more, in fallback order (a profile may write one object or a list). */
  think: ThinkSpec[];
  /** One or more, in fallback order. Absent: the agent's default voice, `turn-kit-en`. */
  speak?: SpeakSpec[];
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
  /** Calls answered with this profile are recorded (docs/recordings.md); absent: not recorded. */
  recording?: RecordingSettings;
}

export interface NumberRouting {
  /** Profile for a called number that has no entry. */
  default: string;
  /** Called number in E.164 → profile name. */
  routes: Record<string, string>;
}

export type AgentAuth = 'key' | 'grant';

export interface DialerConfig {
  /**
   * An instance silent this long is taken for dead: another adopts its campaign calls and reads
   * their outcome from the carrier (`DIALER_FAILOVER_MS`).
   */
  failoverMs: number;
  /**
   * How long an attempt whose carrier call id never came back waits for a callback naming it before
   * it is closed, not redialed (`DIALER_LOST_DISPATCH_GRACE_MS`).
   */
  lostDispatchGraceMs: number;
}

/**
 * Each carrier's settings, under its name. Empty here: each carrier's own config.ts adds its entry
 * (TypeScript declaration merging), so the configuration names no carrier (src/carriers/registry.ts).
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface CarrierConfigs {}

export interface Config extends CarrierConfigs {
  port: number;
  host: string;
  /** Base URL carriers reach this server at, without a trailing slash. */
  publicUrl: string;
  region: Region;
  /** This instance's name (`INSTANCE_ID`, default the host name): in media URLs and call records. */
  instanceId: string;
  nodeEnv: string;
  logLevel: string;
  /** `LOG_TRANSCRIPTS=on`: log lines keep what callers and the agent said and the keys pressed. */
  logTranscripts: boolean;
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
  adminToken: string | null;
  drainTimeoutMs: number;
  maxCalls: number;
  /** Where declined calls (draining, at capacity) are redirected; null: told to call back and hung up. */
  declineRedirectUrl: string | null;
  /** How often carrier media sockets are pinged; one missed pong and the socket is cut. */
  carrierPingIntervalMs: number;
  /**
   * The built-in simulated carrier's callees wait this many times less (ringing, detection, time on
   * the line) than a real phone would; their audio still plays in real time (`SIM_CALLEE_SPEEDUP`).
   */
  simulatedCalleeSpeedup?: number;
  /**
   * A simulated carrier API already running, used instead of starting the built-in one, so several
   * instances on one machine place their calls on one carrier that knows every call (`SIM_CARRIER_API_URL`).
   */
  simulatedCarrierApiUrl?: string;
  /** Campaign dialing across instances. */
  dialer?: DialerConfig;
  regions: Record<Region, RegionHosts>;
  profiles: Record<string, AgentProfile>;
  numbers: NumberRouting;
  /** Analysis and rendered prompts (`ANALYSIS`, config/prompts.json); absent means both off. */
  speech?: SpeechConfig;
  /** What may be dialed or transferred to (`DIAL_*`); absent: the defaults. */
  dialPolicy?: DialPolicyConfig;
  /** Which hosts a fetch of a caller's URL may reach besides public ones (`FETCH_ALLOWED_HOSTS`); absent: none. */
  fetchPolicy?: FetchPolicyConfig;
  /** Where call recordings are kept (`RECORDING_STORE`); absent: the file store under `dataDir`. */
  recordings?: RecordingStoreConfig;
}
