// Validation of `Settings` and the `Update*` messages as the voice agent applies them
// (docs/protocols/agent.md; docs/protocols/speech-service.md sections 3 and 11). `think` and
// `speak` may be one provider or a list (a fallback chain); `agent.context.messages` holds History
// in either shape. A rejected message becomes a fatal `Error` with code INVALID_SETTINGS.
import { type AudioEncoding, type AudioFormat, SUPPORTED_SAMPLE_RATES } from '../../audio/codec.js';

/** The voice used when `agent.speak` is omitted (docs/protocols/agent.md section 4.2). */
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
  /** `flags.history`: send `History` events as the conversation goes. */
  history: boolean;
  /** History the client gave in `agent.context.messages` (a resumed conversation). */
  context: readonly Record<string, unknown>[];
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
  // Anything but raw audio would put header bytes on the phone leg (docs/protocols/agent.md section 4.1).
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
  const think = checkThink(agent.think);
  if (!think.ok) return think;
  const context = checkContext(agent.context);
  if (!context.ok) return context;
  const flags = msg.flags === undefined ? {} : asObject(msg.flags);
  if (!flags) return invalid('flags must be an object');
  if (flags.history !== undefined && typeof flags.history !== 'boolean') {
    return invalid('flags.history must be true or false');
  }

  const settings: SessionSettings = {
    input: input.value,
    output: output.value,
    speak: speak.value,
    clientFunctions: think.value.client,
    serverFunctions: think.value.server,
    history: flags.history === true,
    context: context.value,
  };
  if (typeof agent.greeting === 'string' && agent.greeting.trim() !== '') settings.greeting = agent.greeting;
  if (think.value.prompt !== undefined) settings.prompt = think.value.prompt;
  return { ok: true, value: settings };
}

const MAX_CHAIN = 5;

/** One provider or a list of 1 to 5 (docs/protocols/agent.md: a fallback chain). */
function entriesOf(value: unknown, at: string): Checked<{ entry: Record<string, unknown>; at: string }[]> {
  if (!Array.isArray(value)) {
    const entry = asObject(value);
    return entry
      ? { ok: true, value: [{ entry, at }] }
      : invalid(`${at} must be an object or a list of them`);
  }
  if (value.length === 0 || value.length > MAX_CHAIN)
    return invalid(`${at} must list 1 to ${MAX_CHAIN} providers`);
  const entries: { entry: Record<string, unknown>; at: string }[] = [];
  for (const [i, item] of value.entries()) {
    const entry = asObject(item);
    if (!entry) return invalid(`${at}[${i}] must be an object`);
    entries.push({ entry, at: `${at}[${i}]` });
  }
  return { ok: true, value: entries };
}

interface ThinkChoice {
  client: Set<string>;
  server: Set<string>;
  prompt?: string;
}

/** `agent.think`: optional; each entry's functions are declared, the first entry's prompt is used. */
export function checkThink(think: unknown): Checked<ThinkChoice> {
  if (think === undefined) return { ok: true, value: { client: new Set(), server: new Set() } };
  const entries = entriesOf(think, 'agent.think');
  if (!entries.ok) return entries;
  const choice: ThinkChoice = { client: new Set(), server: new Set() };
  for (const { entry, at } of entries.value) {
    if (entry.provider !== undefined && !asObject(entry.provider))
      return invalid(`${at}.provider must be an object`);
    const functions = checkFunctions(entry.functions, at);
    if (!functions.ok) return functions;
    for (const name of functions.value.client) choice.client.add(name);
    for (const name of functions.value.server) choice.server.add(name);
    if (choice.prompt === undefined && typeof entry.prompt === 'string') choice.prompt = entry.prompt;
  }
  return { ok: true, value: choice };
}

/** `agent.context.messages`: History as text turns or as function calls (docs/protocols/agent.md). */
function checkContext(context: unknown): Checked<Record<string, unknown>[]> {
  if (context === undefined) return { ok: true, value: [] };
  const messages = asObject(context)?.messages;
  if (!Array.isArray(messages)) return invalid('agent.context.messages must be a list');
  for (const [i, item] of messages.entries()) {
    const at = `agent.context.messages[${i}]`;
    const message = asObject(item);
    if (!message || message.type !== 'History') return invalid(`${at} must be a History message`);
    if (message.function_calls !== undefined) {
      if (!Array.isArray(message.function_calls)) return invalid(`${at}.function_calls must be a list`);
      for (const [j, call] of message.function_calls.entries()) {
        const fn = asObject(call);
        const fields = ['id', 'name', 'arguments', 'response'];
        if (
          !fn ||
          fields.some((field) => typeof fn[field] !== 'string') ||
          typeof fn.client_side !== 'boolean'
        ) {
          return invalid(`${at}.function_calls[${j}] needs id, name, client_side, arguments and response`);
        }
      }
    } else if (
      (message.role !== 'user' && message.role !== 'assistant') ||
      typeof message.content !== 'string'
    ) {
      return invalid(`${at} needs role (user or assistant) and content, or function_calls`);
    }
  }
  return { ok: true, value: messages as Record<string, unknown>[] };
}

/**
 * `agent.speak` rules (docs/protocols/agent.md section 4.2): omitted means turn-kit-en; a provider without
 * `version` is v1; v1 needs a `lyric-` model and v2 a `turn-` model. A list is a fallback chain:
 * every entry is checked, and the first one speaks.
 */
export function checkSpeak(speak: unknown): Checked<SpeakChoice> {
  if (speak === undefined) return { ok: true, value: { ...DEFAULT_SPEAK } };
  const entries = entriesOf(speak, 'agent.speak');
  if (!entries.ok) return entries;
  const choices: SpeakChoice[] = [];
  for (const { entry, at } of entries.value) {
    const choice = checkSpeakEntry(entry, at);
    if (!choice.ok) return choice;
    choices.push(choice.value);
  }
  return { ok: true, value: choices[0]! };
}

function checkSpeakEntry(speak: Record<string, unknown>, at: string): Checked<SpeakChoice> {
  const provider = asObject(speak.provider);
  if (!provider) return invalid(`${at}.provider must be an object`);
  const version = provider.version ?? 'v1';
  if (version !== 'v1' && version !== 'v2') {
    return invalid(`${at}.provider.version must be "v1" or "v2", got ${JSON.stringify(version)}`);
  }
  const model = provider.model;
  if (typeof model !== 'string' || model === '') return invalid(`${at}.provider.model is required`);
  const family = version === 'v1' ? 'lyric-' : 'turn-';
  if (!model.startsWith(family)) {
    return invalid(
      `${at}.provider version ${version}${provider.version === undefined ? ' (the default)' : ''} ` +
        `requires a ${family} model, got "${model}"`,
    );
  }
  return { ok: true, value: { version, model } };
}

/** `UpdateListen.listen`: a provider object with a type. */
export function checkListen(listen: unknown): Checked<Record<string, unknown>> {
  const provider = asObject(asObject(listen)?.provider);
  if (!provider || typeof provider.type !== 'string' || provider.type === '') {
    return invalid('listen.provider.type is required');
  }
  return { ok: true, value: provider };
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

function checkFunctions(value: unknown, at: string): Checked<{ client: Set<string>; server: Set<string> }> {
  const client = new Set<string>();
  const server = new Set<string>();
  if (value === undefined) return { ok: true, value: { client, server } };
  if (!Array.isArray(value)) return invalid(`${at}.functions must be an array`);
  for (const [i, entry] of value.entries()) {
    const fn = asObject(entry);
    if (!fn || typeof fn.name !== 'string' || fn.name === '') {
      return invalid(`${at}.functions[${i}].name is required`);
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
