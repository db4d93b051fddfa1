// The voice agent wire protocol (docs/protocols/agent.md): JSON text frames with a `type`, audio as
// binary frames in the encodings `Settings` declares. Shared by the client and the local agent.

export const AGENT_PATH = '/v1/agent/converse';

export interface AudioSpec {
  encoding: 'linear16' | 'mulaw' | 'alaw';
  sample_rate: number;
}

export interface AgentFunctionDecl {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  endpoint?: Record<string, unknown>;
}

/** One turn of the conversation so far, as the caller heard it. */
export interface HistoryTextMessage {
  type: 'History';
  role: 'user' | 'assistant';
  content: string;
}

/** A function call that already ran, and what it returned (docs/protocols/agent.md, History). */
export interface HistoryFunctionCall {
  id: string;
  name: string;
  client_side: boolean;
  arguments: string;
  response: string;
  /** Passed back unchanged when the request carried one. */
  thought_signature?: string;
}

export interface HistoryFunctionCallsMessage {
  type: 'History';
  function_calls: HistoryFunctionCall[];
}

/** `History` comes in two shapes: a turn of text, or the function calls made at that point. */
export type HistoryMessage = HistoryTextMessage | HistoryFunctionCallsMessage;

/** One think provider with what it needs to answer; a list of them is a fallback chain. */
export interface ThinkSettings {
  provider: Record<string, unknown>;
  prompt?: string;
  functions?: AgentFunctionDecl[];
  endpoint?: Record<string, unknown>;
}

/** One speak provider; a list of them is a fallback chain, tried in order. */
export interface SpeakSettings {
  provider: Record<string, unknown>;
  endpoint?: Record<string, unknown>;
}

export interface ListenSettings {
  provider: Record<string, unknown>;
}

export interface SettingsMessage {
  type: 'Settings';
  tags?: string[];
  mip_opt_out?: boolean;
  audio: {
    input: AudioSpec;
    output: AudioSpec & { container?: 'none' | 'wav' };
  };
  /** `history: true` asks the agent to send `History` events as the conversation goes. */
  flags?: { history?: boolean };
  agent: {
    language?: string;
    context?: { messages: HistoryMessage[] };
    listen?: ListenSettings;
    think?: ThinkSettings | ThinkSettings[];
    speak?: SpeakSettings | SpeakSettings[];
    greeting?: string;
  };
}

export interface FunctionCallEntry {
  id: string;
  name: string;
  arguments: string;
  client_side: boolean;
  /** Opaque; handed back unchanged in `History`. */
  thought_signature?: string;
}

/** The agent's own delay breakdown for one turn, in seconds (docs/protocols/agent.md). */
export interface LatencyReportMessage {
  type: 'LatencyReport';
  stt_latency?: number;
  ttt_token_latency?: number;
  ttt_text_latency?: number;
  tts_latency?: number;
  total_latency?: number;
}

/** How an injected agent message meets a reply in progress. */
export type InjectBehavior = 'default' | 'queue' | 'interrupt';

/** Mid-call reconfiguration, each answered by its acknowledgement. */
export type AgentUpdateMessage =
  | { type: 'UpdateSpeak'; speak: SpeakSettings | SpeakSettings[] }
  | { type: 'UpdateThink'; think: ThinkSettings | ThinkSettings[] }
  | { type: 'UpdateListen'; listen: ListenSettings };

/** The acknowledgement each update waits for. */
export const UPDATE_ACKS = Object.freeze({
  UpdateSpeak: 'SpeakUpdated',
  UpdateThink: 'ThinkUpdated',
  UpdateListen: 'ListenUpdated',
} as const satisfies Record<AgentUpdateMessage['type'], string>);

/** Messages the agent sends. Unknown types are tolerated by the client (logged and counted). */
export type AgentServerMessage =
  | { type: 'Welcome'; request_id: string }
  | { type: 'SettingsApplied' }
  | { type: 'ConversationText'; role: 'user' | 'assistant'; content: string }
  | { type: 'UserStartedSpeaking' }
  | { type: 'AgentThinking'; content: string }
  | { type: 'FunctionCallRequest'; functions: FunctionCallEntry[] }
  | { type: 'AgentStartedSpeaking'; total_latency: number; tts_latency: number; ttt_latency: number }
  | { type: 'AgentAudioDone' }
  | { type: 'PromptUpdated' }
  | { type: 'SpeakUpdated' }
  | { type: 'ThinkUpdated' }
  | { type: 'ListenUpdated' }
  | { type: 'InjectionRefused'; message: string }
  | { type: 'Error'; description: string; code: string }
  | { type: 'Warning'; description: string; code: string }
  | LatencyReportMessage
  | { type: 'FunctionCallResponse'; id: string; name: string; content: string }
  | { type: 'History'; role?: string; content?: string; function_calls?: HistoryFunctionCall[] };

/** Messages the client sends after `Settings`. */
export type AgentClientMessage =
  | SettingsMessage
  | { type: 'UpdatePrompt'; prompt: string }
  | AgentUpdateMessage
  | { type: 'InjectAgentMessage'; message: string; behavior?: InjectBehavior }
  | { type: 'InjectUserMessage'; content: string }
  | { type: 'FunctionCallResponse'; id: string; name: string; content: string }
  | { type: 'KeepAlive' };
