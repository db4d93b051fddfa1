// What the local voice agent says and does, turn by turn, read from a JSON file. A scenario scripts
// the agent's side only; the caller's audio still decides when each turn happens.
import { readFileSync } from 'node:fs';
import { ConfigError } from '../../errors.js';

export interface ScenarioFunctionCall {
  name: string;
  /** Sent as the JSON string `arguments` of the request; an object is serialized. */
  arguments?: Record<string, unknown> | string;
}

export interface ScenarioTurn {
  /** Transcript reported for the caller's turn; a placeholder naming its length otherwise. */
  user?: string;
  /** A phrase id from assets/phrases/phrases.json, or free text. */
  reply?: string;
  functionCalls?: ScenarioFunctionCall[];
  /** Extra thinking time before the reply (and before any function call). */
  delayMs?: number;
  /** Sends this fatal Error instead of replying, then closes. */
  error?: { code: string; description: string };
  /** Closes the socket abruptly (no Error, no close frame): at once, or mid-reply after dropAfterMs. */
  drop?: boolean;
  dropAfterMs?: number;
}

export interface Scenario {
  greeting?: string;
  turns: ScenarioTurn[];
  /** Refuse this many upgrades with this HTTP status (every one when `times` is absent). */
  refuseHandshake?: { status: number; times?: number };
  /** Send a `LatencyReport` after each reply. */
  latencyReports?: boolean;
}

/** Reads and validates a scenario file; throws CALLBRIDGE_CONFIG_INVALID naming the bad field. */
export function loadScenario(path: string): Scenario {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`scenario ${path}: cannot read (${(err as Error).message})`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`scenario ${path}: not valid JSON (${(err as Error).message})`);
  }
  return parseScenario(value, path);
}

/** Validates a scenario object (from a file or built in code) and returns a copy of it. */
export function parseScenario(value: unknown, source = 'scenario'): Scenario {
  const fail = (field: string, problem: string): never => {
    throw new ConfigError(`${source}: ${field} ${problem}`);
  };
  const root = objectAt(value, 'the scenario', fail);
  onlyKeys(root, ['greeting', 'turns', 'refuseHandshake', 'latencyReports'], '', fail);

  const scenario: Scenario = { turns: [] };
  if (root.greeting !== undefined) scenario.greeting = textAt(root.greeting, 'greeting', fail);
  if (!Array.isArray(root.turns)) fail('turns', 'must be an array of turns');
  (root.turns as unknown[]).forEach((turn, i) => {
    scenario.turns.push(parseTurn(turn, `turns[${i}]`, fail));
  });
  if (root.latencyReports !== undefined) {
    if (typeof root.latencyReports !== 'boolean') fail('latencyReports', 'must be true or false');
    scenario.latencyReports = root.latencyReports as boolean;
  }
  if (root.refuseHandshake !== undefined) {
    const refuse = objectAt(root.refuseHandshake, 'refuseHandshake', fail);
    onlyKeys(refuse, ['status', 'times'], 'refuseHandshake.', fail);
    const status = refuse.status;
    if (!Number.isInteger(status) || (status as number) < 400 || (status as number) > 599) {
      fail('refuseHandshake.status', 'must be an HTTP error status (400 to 599)');
    }
    scenario.refuseHandshake = { status: status as number };
    if (refuse.times !== undefined) {
      if (!Number.isInteger(refuse.times) || (refuse.times as number) < 1) {
        fail('refuseHandshake.times', 'must be a positive integer');
      }
      scenario.refuseHandshake.times = refuse.times as number;
    }
  }
  return scenario;
}

type Fail = (field: string, problem: string) => never;

const TURN_KEYS = ['user', 'reply', 'functionCalls', 'delayMs', 'error', 'drop', 'dropAfterMs'];

function parseTurn(value: unknown, at: string, fail: Fail): ScenarioTurn {
  const raw = objectAt(value, at, fail);
  onlyKeys(raw, TURN_KEYS, `${at}.`, fail);
  const turn: ScenarioTurn = {};
  if (raw.user !== undefined) turn.user = textAt(raw.user, `${at}.user`, fail);
  if (raw.reply !== undefined) turn.reply = textAt(raw.reply, `${at}.reply`, fail);
  if (raw.delayMs !== undefined) turn.delayMs = durationAt(raw.delayMs, `${at}.delayMs`, fail);
  if (raw.functionCalls !== undefined) {
    if (!Array.isArray(raw.functionCalls)) fail(`${at}.functionCalls`, 'must be an array');
    turn.functionCalls = (raw.functionCalls as unknown[]).map((call, j) =>
      parseFunctionCall(call, `${at}.functionCalls[${j}]`, fail),
    );
  }
  if (raw.error !== undefined) {
    const error = objectAt(raw.error, `${at}.error`, fail);
    onlyKeys(error, ['code', 'description'], `${at}.error.`, fail);
    turn.error = {
      code: textAt(error.code, `${at}.error.code`, fail),
      description: textAt(error.description, `${at}.error.description`, fail),
    };
  }
  if (raw.drop !== undefined) {
    if (typeof raw.drop !== 'boolean') fail(`${at}.drop`, 'must be true or false');
    turn.drop = raw.drop as boolean;
  }
  if (raw.dropAfterMs !== undefined) {
    if (turn.drop !== true) fail(`${at}.dropAfterMs`, 'needs "drop": true');
    turn.dropAfterMs = durationAt(raw.dropAfterMs, `${at}.dropAfterMs`, fail);
  }
  if (turn.error && turn.drop) fail(at, 'cannot have both "error" and "drop"');
  // A reply is spoken unless the turn ends the session before speaking.
  const endsBeforeReply = turn.error !== undefined || (turn.drop === true && turn.dropAfterMs === undefined);
  if (!endsBeforeReply && turn.reply === undefined) fail(`${at}.reply`, 'is required (a phrase id or text)');
  return turn;
}

function parseFunctionCall(value: unknown, at: string, fail: Fail): ScenarioFunctionCall {
  const raw = objectAt(value, at, fail);
  onlyKeys(raw, ['name', 'arguments'], `${at}.`, fail);
  const call: ScenarioFunctionCall = { name: textAt(raw.name, `${at}.name`, fail) };
  const args = raw.arguments;
  if (args !== undefined) {
    if (typeof args === 'string') call.arguments = args;
    else call.arguments = objectAt(args, `${at}.arguments`, fail);
  }
  return call;
}

function objectAt(value: unknown, at: string, fail: Fail): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) fail(at, 'must be an object');
  return value as Record<string, unknown>;
}

function onlyKeys(obj: Record<string, unknown>, allowed: string[], prefix: string, fail: Fail): void {
  for (const key of Object.keys(obj)) {
    if (!allowed.includes(key))
      fail(`${prefix}${key}`, `is not a scenario field (expected one of ${allowed.join(', ')})`);
  }
}

function textAt(value: unknown, at: string, fail: Fail): string {
  if (typeof value !== 'string' || value.trim() === '') fail(at, 'must be a non-empty string');
  return value as string;
}

function durationAt(value: unknown, at: string, fail: Fail): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 600_000) {
    fail(at, 'must be a number of milliseconds between 0 and 600000');
  }
  return value as number;
}
