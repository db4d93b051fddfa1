// Validation of `Settings` and `UpdateSpeak` as the voice agent applies them (PROTOCOLS.md section 1;
// spec sections 4.5 and 9). A rejected message becomes a fatal `Error` with code INVALID_SETTINGS.
import { type AudioEncoding, type AudioFormat, SUPPORTED_SAMPLE_RATES } from '../../audio/codec.js';

/** The voice used when `agent.speak` is omitted (spec section 4.5). */
export const DEFAULT_SPEAK = Object.freeze({ version: 'v2', model: 'turn-kit-en' } as const);

export interface SpeakChoice {
  version: 'v1' | 'v2';
  model: string;
}

/** What a session keeps of an accepted `Settings`. */
export interface SessionSettings {
  input: AudioFormat;
  output: AudioFormat;
  speak: SpeakChoice;
  greeting?: string;
  prompt?: string;
  /** Functions without an `endpoint`: the agent asks the client to run them. */
  clientFunctions: ReadonlySet<string>;
  /** Functions with an `endpoint`: the agent runs them itself. */
  serverFunctions: ReadonlySet<string>;
}

export type Checked<T> = { ok: true; value: T } | { ok: false; description: string };

const ENCODINGS: readonly AudioEncoding[] = ['mulaw', 'alaw', 'linear16'];

export function checkSettings(msg: Record<string, unknown>): Checked<SessionSettings> {
  const audio = asObject(msg.audio);
  if (!audio) return invalid('audio is required (audio.input and audio.output)');
  const input = checkAudio(audio.input, 'audio.input');
  if (!input.ok) return input;
  const output = checkAudio(audio.output, 'audio.output');
  if (!output.ok) return output;
  const container = asObject(audio.output)?.container;
  // Anything but raw audio would put header bytes on the phone leg (PROTOCOLS.md section 1).
  if (container !== undefined && container !== 'none') {
    return invalid(`audio.output.container must be "none", got ${JSON.stringify(container)}`);
  }

  const agent = asObject(msg.agent);
  if (!agent) return invalid('agent is required');
  const speak = checkSpeak(agent.speak);
  if (!speak.ok) return speak;

  if (agent.greeting !== undefined && typeof agent.greeting !== 'string') {
    return invalid('agent.greeting must be a string');
  }
  const think = agent.think === undefined ? {} : asObject(agent.think);
  if (!think) return invalid('agent.think must be an object');
  const functions = checkFunctions(think.functions);
  if (!functions.ok) return functions;

  const settings: SessionSettings = {
    input: input.value,
    output: output.value,
    speak: speak.value,
    clientFunctions: functions.value.client,
    serverFunctions: functions.value.server,
  };
  if (typeof agent.greeting === 'string' && agent.greeting.trim() !== '') settings.greeting = agent.greeting;
  if (typeof think.prompt === 'string') settings.prompt = think.prompt;
  return { ok: true, value: settings };
}

/**
 * `agent.speak` rules (spec sections 4.5 and 9.5): omitted means turn-kit-en; a provider without
 * `version` is v1; v1 needs a `lyric-` model and v2 a `turn-` model.
 */
export function checkSpeak(speak: unknown): Checked<SpeakChoice> {
  if (speak === undefined) return { ok: true, value: { ...DEFAULT_SPEAK } };
  const provider = asObject(asObject(speak)?.provider);
  if (!provider) return invalid('agent.speak.provider must be an object');
  const version = provider.version ?? 'v1';
  if (version !== 'v1' && version !== 'v2') {
    return invalid(`agent.speak.provider.version must be "v1" or "v2", got ${JSON.stringify(version)}`);
  }
  const model = provider.model;
  if (typeof model !== 'string' || model === '') return invalid('agent.speak.provider.model is required');
  const family = version === 'v1' ? 'lyric-' : 'turn-';
  if (!model.startsWith(family)) {
    return invalid(
      `agent.speak.provider version ${version}${provider.version === undefined ? ' (the default)' : ''} ` +
        `requires a ${family} model, got "${model}"`,
    );
  }
  return { ok: true, value: { version, model } };
}

function checkAudio(value: unknown, at: string): Checked<AudioFormat> {
  const spec = asObject(value);
  if (!spec) return invalid(`${at} is required`);
  const encoding = spec.encoding;
  if (typeof encoding !== 'string' || !ENCODINGS.includes(encoding as AudioEncoding)) {
    return invalid(`${at}.encoding must be one of ${ENCODINGS.join(', ')}, got ${JSON.stringify(encoding)}`);
  }
  const rate = spec.sample_rate;
  if (typeof rate !== 'number' || !SUPPORTED_SAMPLE_RATES.includes(rate)) {
    return invalid(`${at}.sample_rate must be one of ${SUPPORTED_SAMPLE_RATES.join(', ')}`);
  }
  return { ok: true, value: { encoding: encoding as AudioEncoding, sampleRate: rate } };
}

function checkFunctions(value: unknown): Checked<{ client: Set<string>; server: Set<string> }> {
  const client = new Set<string>();
  const server = new Set<string>();
  if (value === undefined) return { ok: true, value: { client, server } };
  if (!Array.isArray(value)) return invalid('agent.think.functions must be an array');
  for (const [i, entry] of value.entries()) {
    const fn = asObject(entry);
    if (!fn || typeof fn.name !== 'string' || fn.name === '') {
      return invalid(`agent.think.functions[${i}].name is required`);
    }
    (fn.endpoint === undefined ? client : server).add(fn.name);
  }
  return { ok: true, value: { client, server } };
}

function asObject(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function invalid(description: string): { ok: false; description: string } {
  return { ok: false, description };
}
