// Builds the `Settings` message (docs/protocols/agent.md section 4) for one call from its agent profile.
import type { MediaFormat } from '../audio/format.js';
import type { AgentProfile } from '../config/types.js';
import type {
  AgentFunctionDecl,
  AudioSpec,
  HistoryMessage,
  SettingsMessage,
  SpeakSettings,
  ThinkSettings,
} from './protocol.js';

export interface CallIdentity {
  callSid: string;
  streamSid: string;
  carrier: string;
}

export const END_CALL_FUNCTION: AgentFunctionDecl = {
  name: 'end_call',
  description:
    'End the phone call. Call this after saying goodbye, when the caller has nothing more to discuss.',
  parameters: { type: 'object', properties: {} },
};

/** On recorded calls (docs/recordings.md): what is said while paused is not kept. */
export const RECORDING_FUNCTION_DECLS: readonly AgentFunctionDecl[] = [
  {
    name: 'pause_recording',
    description:
      'Pause the call recording, for example before the caller reads a card number or other sensitive details.',
    parameters: { type: 'object', properties: {} },
  },
  {
    name: 'resume_recording',
    description: 'Resume the call recording once the sensitive part of the conversation is over.',
    parameters: { type: 'object', properties: {} },
  },
];

export function transferFunction(allowList: string[]): AgentFunctionDecl {
  return {
    name: 'transfer_call',
    description: `Transfer the caller to a person. Allowed targets: ${allowList.join(', ')}.`,
    parameters: {
      type: 'object',
      properties: { target: { type: 'string', description: 'Phone number (E.164) or SIP address to dial.' } },
      required: ['target'],
    },
  };
}

export function declaredFunctions(profile: AgentProfile): AgentFunctionDecl[] {
  const functions: AgentFunctionDecl[] = [];
  if (profile.builtins.endCall) functions.push(END_CALL_FUNCTION);
  if (profile.builtins.transferAllowList.length > 0) {
    functions.push(transferFunction(profile.builtins.transferAllowList));
  }
  if (profile.recording?.enabled) functions.push(...RECORDING_FUNCTION_DECLS);
  for (const fn of profile.httpFunctions) {
    functions.push({ name: fn.name, description: fn.description, parameters: fn.parameters });
  }
  return functions;
}

/** Carrier audio passes through untouched: the agent is told to speak the carrier's own format. */
export function audioSpec(format: MediaFormat): AudioSpec {
  return { encoding: format.encoding, sample_rate: format.sampleRate };
}

export function buildSettings(
  profile: AgentProfile,
  call: CallIdentity,
  format: MediaFormat,
  history: HistoryMessage[] = [],
): SettingsMessage {
  const audio = audioSpec(format);
  const agent: SettingsMessage['agent'] = {
    language: profile.language,
    think: thinkSettings(profile),
  };
  if (profile.listen) agent.listen = profile.listen;
  const speak = speakSettings(profile);
  if (speak) agent.speak = speak;
  if (history.length > 0) {
    // A resumed conversation: the agent gets what the caller heard so far, and no second greeting.
    agent.context = { messages: history };
  } else if (profile.greeting) {
    agent.greeting = profile.greeting;
  }
  return {
    type: 'Settings',
    tags: [
      'callbridge',
      `carrier:${call.carrier}`,
      `call:${call.callSid}`,
      `stream:${call.streamSid}`,
      ...profile.tags,
    ],
    audio: { input: audio, output: { ...audio, container: 'none' } },
    agent,
  };
}

/**
 * The profile's think chain (docs/protocols/agent.md): one provider stays one object; a fallback
 * chain becomes a list whose every entry carries the prompt and functions, so whichever provider
 * answers knows the same things.
 */
export function thinkSettings(profile: AgentProfile): ThinkSettings | ThinkSettings[] {
  const functions = declaredFunctions(profile);
  const entries = profile.think.map((spec): ThinkSettings => ({
    provider: spec.provider,
    prompt: profile.prompt,
    ...(functions.length > 0 ? { functions } : {}),
    ...(spec.endpoint ? { endpoint: spec.endpoint } : {}),
  }));
  return entries.length === 1 ? entries[0]! : entries;
}

/** The profile's speak chain as written, in order; one provider stays one object. */
export function speakSettings(profile: AgentProfile): SpeakSettings | SpeakSettings[] | undefined {
  if (!profile.speak || profile.speak.length === 0) return undefined;
  const entries = profile.speak.map((spec): SpeakSettings => ({
    provider: spec.provider,
    ...(spec.endpoint ? { endpoint: spec.endpoint } : {}),
  }));
  return entries.length === 1 ? entries[0]! : entries;
}
