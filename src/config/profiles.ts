// config/agents/<name>.json: one agent profile per file, named by the file. Checks the shape, then
// the rules that span fields, and fills the defaults so callers never meet an absent setting.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { ConfigError } from '../errors.js';
import { checkShape, displayPath, fileError, readJson } from './json-file.js';
import { readRecordingSettings } from './recording.js';
import { MAX_PROVIDER_CHAIN, PROFILE_NAME, ProfileFile, SpeakEntryFile, ThinkEntryFile } from './schema.js';
import { speakModelProblem, speakSpeedProblem } from './speak-rules.js';
import type { AgentProfile, HttpFunction, SpeakProvider, SpeakSpec, ThinkSpec } from './types.js';
import { checkUrl, ENDPOINT_URL } from './urls.js';

/** Client-side functions callbridge provides itself; a profile may not redefine them. */
const BUILTIN_FUNCTIONS = ['end_call', 'transfer_call', 'pause_recording', 'resume_recording'];
const FUNCTION_URL_RULE = ENDPOINT_URL(['http', 'https']);

export const PROFILE_DEFAULTS = {
  language: 'en',
  functionTimeoutMs: 5000,
  dtmf: { enabled: true, interDigitTimeoutMs: 2000, terminator: '#', maxDigits: 20 },
  limits: { silencePromptMs: 15_000, silenceHangupMs: 45_000, maxCallMs: 3_600_000 },
} as const;

/** Every profile in `<configDir>/agents`, keyed by name. At least one must exist. */
export function loadProfiles(configDir: string, cwd: string): Record<string, AgentProfile> {
  const agentsDir = join(configDir, 'agents');
  const files = listProfileFiles(agentsDir, cwd);
  // The project root: fallback audio paths are written relative to it, like `assets/…`.
  const projectRoot = dirname(configDir);
  const profiles: Record<string, AgentProfile> = {};
  for (const fileName of files) {
    const name = fileName.slice(0, -'.json'.length);
    const file = join(agentsDir, fileName);
    const shown = displayPath(file, cwd);
    if (!PROFILE_NAME.test(name)) {
      throw new ConfigError(
        `${shown}: profile name ${JSON.stringify(name)} must be lowercase letters, digits, - and _, starting with a letter or digit`,
      );
    }
    profiles[name] = toProfile(name, readJson(file, shown), shown, projectRoot);
  }
  return profiles;
}

function listProfileFiles(agentsDir: string, cwd: string): string[] {
  const shownDir = displayPath(agentsDir, cwd);
  let entries: string[];
  try {
    entries = readdirSync(agentsDir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'unknown error';
    throw new ConfigError(`${shownDir}: cannot read the agent profiles folder (${code})`);
  }
  const files = entries.filter((entry) => entry.endsWith('.json')).sort();
  if (files.length === 0) {
    throw new ConfigError(`${shownDir}: no agent profiles; add at least one <name>.json`);
  }
  return files;
}

function toProfile(name: string, raw: unknown, shown: string, projectRoot: string): AgentProfile {
  const file = checkShape(ProfileFile, raw, shown);
  const profile: AgentProfile = {
    name,
    language: file.language ?? PROFILE_DEFAULTS.language,
    prompt: file.prompt,
    think: toThinkChain(file.think, shown),
    builtins: {
      endCall: file.endCall ?? false,
      transferAllowList: file.transfer?.allow ?? [],
    },
    httpFunctions: toHttpFunctions(file.functions ?? [], shown),
    dtmf: { ...PROFILE_DEFAULTS.dtmf, ...file.dtmf },
    limits: toLimits(file.limits, shown),
    fallback: {},
    tags: file.tags ?? [],
  };
  if (file.greeting !== undefined) profile.greeting = file.greeting;
  if (file.listen !== undefined) profile.listen = file.listen;
  // No `speak` at all stays absent: the agent then speaks with turn-kit-en (docs/protocols/agent.md section 4.2).
  if (file.speak !== undefined) profile.speak = toSpeakChain(file.speak, shown);
  if (file.fallback?.transferTo !== undefined) profile.fallback.transferTo = file.fallback.transferTo;
  if (file.fallback?.audioFile !== undefined) {
    profile.fallback.audioFile = resolveAudioFile(file.fallback.audioFile, projectRoot, shown);
  }
  if (file.recording !== undefined) {
    const recording = readRecordingSettings(file.recording);
    if (!recording.ok) throw new ConfigError(`${shown}: ${recording.problem}`);
    profile.recording = recording.settings;
  }
  return profile;
}

/**
 * `think` and `speak` are one provider or a list of them, a fallback chain (docs/protocols/agent.md):
 * each entry is checked at its own pointer, and a single object becomes a list of one.
 */
function chainEntries(value: unknown, field: string, shown: string): { entry: unknown; at: string }[] {
  if (!Array.isArray(value)) return [{ entry: value, at: `/${field}` }];
  if (value.length === 0 || value.length > MAX_PROVIDER_CHAIN) {
    throw fileError(
      shown,
      `/${field}`,
      `a list must hold 1 to ${MAX_PROVIDER_CHAIN} providers, got ${value.length}`,
    );
  }
  return value.map((entry, i) => ({ entry, at: `/${field}/${i}` }));
}

function toThinkChain(value: unknown, shown: string): ThinkSpec[] {
  return chainEntries(value, 'think', shown).map(({ entry, at }) => {
    const checked = checkShape(ThinkEntryFile, entry, shown, at);
    const spec: ThinkSpec = { provider: checked.provider };
    if (checked.endpoint !== undefined) spec.endpoint = checked.endpoint;
    return spec;
  });
}

function toSpeakChain(value: unknown, shown: string): SpeakSpec[] {
  return chainEntries(value, 'speak', shown).map(({ entry, at }) => {
    const checked = checkShape(SpeakEntryFile, entry, shown, at);
    const spec: SpeakSpec = { provider: toSpeakProvider(checked.provider, shown, `${at}/provider`) };
    if (checked.endpoint !== undefined) spec.endpoint = checked.endpoint;
    return spec;
  });
}

/**
 * docs/protocols/agent.md section 4.2: a provider without `version` is `v1`; `v1` needs a `lyric-`
 * model and `v2` a `turn-` one; a `speed` keeps to its version's range (docs/protocols/speech-service.md section 10). Checked here so a
 * bad profile never reaches a live call.
 */
function toSpeakProvider(provider: SpeakEntryFile['provider'], shown: string, at: string): SpeakProvider {
  const version = provider.version ?? 'v1';
  const modelProblem = speakModelProblem(version, provider.model, provider.version === undefined);
  if (modelProblem !== null) throw fileError(shown, `${at}/model`, modelProblem);
  const { speed } = provider as { speed?: unknown };
  if (speed !== undefined) {
    const speedProblem = speakSpeedProblem(version, provider.model, speed);
    if (speedProblem !== null) throw fileError(shown, `${at}/speed`, speedProblem);
  }
  return { ...provider, version, model: provider.model };
}

function toHttpFunctions(functions: NonNullable<ProfileFile['functions']>, shown: string): HttpFunction[] {
  const seen = new Set<string>();
  return functions.map((fn, index) => {
    const at = `/functions/${index}`;
    if (BUILTIN_FUNCTIONS.includes(fn.name)) {
      throw fileError(
        shown,
        `${at}/name`,
        `${JSON.stringify(fn.name)} is built in; enable it with endCall or transfer instead`,
      );
    }
    if (seen.has(fn.name))
      throw fileError(shown, `${at}/name`, `${JSON.stringify(fn.name)} is defined twice`);
    seen.add(fn.name);
    const url = checkUrl(fn.url, FUNCTION_URL_RULE);
    if (!url.ok) throw fileError(shown, `${at}/url`, `${url.problem}, got ${JSON.stringify(fn.url)}`);
    const result: HttpFunction = {
      name: fn.name,
      description: fn.description,
      parameters: fn.parameters ?? { type: 'object', properties: {} },
      url: fn.url,
      timeoutMs: fn.timeoutMs ?? PROFILE_DEFAULTS.functionTimeoutMs,
    };
    if (fn.secret !== undefined) result.secret = fn.secret;
    if (fn.mayUpdate !== undefined && fn.mayUpdate.length > 0) result.mayUpdate = fn.mayUpdate;
    return result;
  });
}

function toLimits(limits: ProfileFile['limits'], shown: string): AgentProfile['limits'] {
  const merged = { ...PROFILE_DEFAULTS.limits, ...limits };
  // The check-in prompt has to come before the hang-up, or the caller is never asked.
  if (
    merged.silencePromptMs > 0 &&
    merged.silenceHangupMs > 0 &&
    merged.silenceHangupMs <= merged.silencePromptMs
  ) {
    throw fileError(
      shown,
      '/limits/silenceHangupMs',
      `must be greater than silencePromptMs (${merged.silencePromptMs}) unless either is 0, got ${merged.silenceHangupMs}`,
    );
  }
  return merged;
}

function resolveAudioFile(audioFile: string, projectRoot: string, shown: string): string {
  const path = resolve(projectRoot, audioFile);
  if (!existsSync(path) || !statSync(path).isFile()) {
    throw fileError(
      shown,
      '/fallback/audioFile',
      `no such file ${JSON.stringify(audioFile)} (resolved to ${path})`,
    );
  }
  return path;
}
