// The voice agent wire protocol (PROTOCOLS.md section 1): JSON text frames with a `type`, audio as
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

export interface HistoryMessage {
  type: 'History';
  role: 'user' | 'assistant';
  content: string;
}

export interface SettingsMessage {
  type: 'Settings';
  tags?: string[];
  mip_opt_out?: boolean;
  audio: {
    input: AudioSpec;
    output: AudioSpec & { container?: 'none' | 'wav' };
  };
  agent: {
    language?: string;
    context?: { messages: HistoryMessage[] };
    listen?: { provider: Record<string, unknown> };
    think?: {
      provider: Record<string, unknown>;
      prompt?: string;
      functions?: AgentFunctionDecl[];
      endpoint?: Record<string, unknown>;
    };
    speak?: { provider: Record<string, unknown> };
    greeting?: string;
  };
}

export interface FunctionCallEntry {
  id: string;
  name: string;
  arguments: string;
  client_side: boolean;
}

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
  | { type: 'InjectionRefused'; message: string }
  | { type: 'Error'; description: string; code: string }
  | { type: 'Warning'; description: string; code: string }
  | { type: 'History'; role?: string; content?: string };

/** Messages the client sends after `Settings`. */
export type AgentClientMessage =
  | SettingsMessage
  | { type: 'UpdatePrompt'; prompt: string }
  | { type: 'UpdateSpeak'; speak: { provider: Record<string, unknown> } }
  | { type: 'InjectAgentMessage'; message: string }
  | { type: 'InjectUserMessage'; content: string }
  | { type: 'FunctionCallResponse'; id: string; name: string; content: string }
  | { type: 'KeepAlive' };
