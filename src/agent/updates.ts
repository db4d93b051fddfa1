// Mid-call reconfiguration asked for by a profile's function (docs/protocols/agent.md: `UpdateSpeak`,
// `UpdateThink`, `UpdateListen`, each answered by `SpeakUpdated`, `ThinkUpdated`, `ListenUpdated`).
//
// How a function asks: its JSON answer carries an `update` object, for example
//   {"ok": true, "update": {"speak": {"provider": {"type": "speech", "version": "v2", "model": "turn-luna-es"}}}}
// with `speak`, `think` and/or `listen`, each in the shape `Settings` takes (speak and think may be
// lists, a fallback chain). Only kinds the profile lists in the function's `mayUpdate` are honoured;
// the `update` object is taken out of what the agent reads, and a refused one is explained there.
//
// The call applies each update before it answers the function, waiting (bounded) for the
// acknowledgement, so the reply that follows already speaks with the new voice.
import type { AgentUpdateKind } from '../config/types.js';
import { speakModelProblem } from '../config/speak-rules.js';
import {
  type AgentUpdateMessage,
  type ListenSettings,
  type SettingsMessage,
  type SpeakSettings,
  type ThinkSettings,
  UPDATE_ACKS,
} from './protocol.js';

export interface UpdateRequest {
  /** The function's answer as the agent should read it: without `update`, with any refusal noted. */
  content: string;
  /** Updates to send, in the order speak, think, listen. */
  updates: AgentUpdateMessage[];
  /** Why each refused part was refused; empty when nothing was. */
  refused: string[];
}

const KINDS: readonly AgentUpdateKind[] = ['speak', 'think', 'listen'];
const MAX_CHAIN = 5;

/**
 * Reads an `update` request out of a function's answer; answers without one pass through unchanged.
 * A think entry without its own prompt or functions gets `thinkDefaults` (the profile's), so a
 * changed model still knows its instructions and the call's functions.
 */
export function readUpdateRequest(
  content: string,
  allowed: readonly AgentUpdateKind[],
  thinkDefaults: Pick<ThinkSettings, 'prompt' | 'functions'> = {},
): UpdateRequest {
  const unchanged = { content, updates: [], refused: [] };
  let answer: unknown;
  try {
    answer = JSON.parse(content);
  } catch {
    return unchanged;
  }
  if (!isObject(answer) || !('update' in answer)) return unchanged;
  const { update, ...rest } = answer;
  const updates: AgentUpdateMessage[] = [];
  const refused: string[] = [];
  if (!isObject(update)) {
    refused.push('update must be an object with speak, think or listen');
  } else {
    for (const key of Object.keys(update)) {
      if (!(KINDS as readonly string[]).includes(key))
        refused.push(`${key.slice(0, 40)} is not an update kind`);
    }
    for (const kind of KINDS) {
      if (!(kind in update)) continue;
      if (!allowed.includes(kind)) {
        refused.push(`${kind} updates are not allowed for this function`);
        continue;
      }
      const checked = checkUpdate(kind, update[kind], thinkDefaults);
      if (typeof checked === 'string') refused.push(checked);
      else updates.push(checked);
    }
  }
  const shown: Record<string, unknown> = { ...rest };
  if (refused.length > 0) shown.update_refused = refused;
  return { content: JSON.stringify(shown), updates, refused };
}

function checkUpdate(
  kind: AgentUpdateKind,
  value: unknown,
  thinkDefaults: Pick<ThinkSettings, 'prompt' | 'functions'>,
): AgentUpdateMessage | string {
  switch (kind) {
    case 'speak': {
      const entries = chain(value);
      if (entries === null) return `speak must be a provider object or a list of 1 to ${MAX_CHAIN}`;
      for (const entry of entries) {
        const problem = speakEntryProblem(entry);
        if (problem !== null) return `speak: ${problem}`;
      }
      return { type: 'UpdateSpeak', speak: single(entries as unknown as SpeakSettings[]) };
    }
    case 'think': {
      const entries = chain(value);
      if (entries === null) return `think must be a provider object or a list of 1 to ${MAX_CHAIN}`;
      if (!entries.every((entry) => hasProviderType(entry))) return 'think: every entry needs provider.type';
      const filled = entries.map((entry) => ({ ...thinkDefaults, ...entry }) as unknown as ThinkSettings);
      return { type: 'UpdateThink', think: single(filled) };
    }
    case 'listen':
      if (!isObject(value) || !hasProviderType(value)) return 'listen: needs provider.type';
      return { type: 'UpdateListen', listen: value as unknown as ListenSettings };
  }
}

/** The same rule as in a profile (speech-service.md sections 3 and 11): v1 (the default) lyric-, v2 turn-. */
function speakEntryProblem(entry: Record<string, unknown>): string | null {
  const provider = entry.provider;
  if (!isObject(provider) || typeof provider.type !== 'string' || provider.type === '') {
    return 'every entry needs provider.type';
  }
  const version = provider.version ?? 'v1';
  if (version !== 'v1' && version !== 'v2') return 'provider.version must be "v1" or "v2"';
  if (typeof provider.model !== 'string') return 'provider.model is required';
  return speakModelProblem(version, provider.model, provider.version === undefined);
}

function chain(value: unknown): Record<string, unknown>[] | null {
  const entries = Array.isArray(value) ? value : [value];
  if (entries.length === 0 || entries.length > MAX_CHAIN || !entries.every(isObject)) return null;
  return entries as Record<string, unknown>[];
}

function single<T>(entries: T[]): T | T[] {
  return entries.length === 1 ? entries[0]! : entries;
}

function hasProviderType(entry: Record<string, unknown>): boolean {
  const provider = entry.provider;
  return isObject(provider) && typeof provider.type === 'string' && provider.type !== '';
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export type UpdateOutcome = 'applied' | 'timeout' | 'closed';

export interface UpdaterTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realTimers: UpdaterTimers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** How long an update waits for its acknowledgement before the call goes on without it. */
export const UPDATE_ACK_TIMEOUT_MS = 3000;

/**
 * Sends updates and settles each when its acknowledgement arrives. Acknowledgements carry no id, so
 * they settle the oldest waiting update of their kind. Remembers the last update of each kind, so a
 * redialed agent can be given the call's current configuration rather than the profile's.
 */
export class AgentUpdater {
  readonly #send: (message: AgentUpdateMessage) => void;
  readonly #timeoutMs: number;
  readonly #timers: UpdaterTimers;
  readonly #waiting = new Map<string, Array<(outcome: UpdateOutcome) => void>>();
  readonly #current: Partial<Record<AgentUpdateMessage['type'], AgentUpdateMessage>> = {};
  /** Waiting updates that the Settings of a redial already carry (`applyTo`). */
  #inRedialSettings = new Set<(outcome: UpdateOutcome) => void>();
  #closed = false;

  constructor(
    send: (message: AgentUpdateMessage) => void,
    opts: { timeoutMs?: number; timers?: UpdaterTimers } = {},
  ) {
    this.#send = send;
    this.#timeoutMs = opts.timeoutMs ?? UPDATE_ACK_TIMEOUT_MS;
    this.#timers = opts.timers ?? realTimers;
  }

  /** Sends `update`; resolves when acknowledged, after the timeout, or when the updater closes. */
  request(update: AgentUpdateMessage): Promise<UpdateOutcome> {
    if (this.#closed) return Promise.resolve('closed');
    this.#current[update.type] = update;
    const ack = UPDATE_ACKS[update.type];
    return new Promise<UpdateOutcome>((resolve) => {
      const queue = this.#waiting.get(ack) ?? [];
      this.#waiting.set(ack, queue);
      const settle = (outcome: UpdateOutcome) => {
        this.#timers.clearTimeout(timer);
        const at = queue.indexOf(settle);
        if (at >= 0) queue.splice(at, 1);
        this.#inRedialSettings.delete(settle);
        resolve(outcome);
      };
      const timer = this.#timers.setTimeout(() => settle('timeout'), this.#timeoutMs);
      queue.push(settle);
      this.#send(update);
    });
  }

  /** Feeds an agent message; true when it was an acknowledgement this updater was waiting for. */
  onMessage(message: { type?: unknown }): boolean {
    if (typeof message.type !== 'string') return false;
    const oldest = this.#waiting.get(message.type)?.[0];
    if (!oldest) return false;
    oldest('applied');
    return true;
  }

  /**
   * The call's settings as updated so far, over `settings` (for a redial). Updates still waiting
   * for the dropped session's acknowledgement are carried by these Settings: `settingsApplied`
   * settles them once the new session has applied them.
   */
  applyTo(settings: SettingsMessage): SettingsMessage {
    this.#inRedialSettings = new Set([...this.#waiting.values()].flat());
    const agent = { ...settings.agent };
    const { UpdateSpeak: speak, UpdateThink: think, UpdateListen: listen } = this.#current;
    if (speak?.type === 'UpdateSpeak') agent.speak = speak.speak;
    if (listen?.type === 'UpdateListen') agent.listen = listen.listen;
    if (think?.type === 'UpdateThink') agent.think = think.think;
    return { ...settings, agent };
  }

  /** A redialed session answered `SettingsApplied`: the updates its Settings carried are applied. */
  settingsApplied(): void {
    for (const settle of [...this.#inRedialSettings]) settle('applied');
    this.#inRedialSettings.clear();
  }

  /** Settles every waiting update as `closed`; later requests resolve `closed` at once. */
  close(): void {
    this.#closed = true;
    for (const queue of this.#waiting.values()) {
      for (const settle of [...queue]) settle('closed');
    }
    this.#waiting.clear();
  }
}
