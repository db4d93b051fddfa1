// One outbound call on request (operator role, audited as call.place). Mounted by the app inside
// the `/v1` admin scope, which checks each route's declared role.
//   POST /calls {to, from?, profile?, carrier?, variables?, amd?} → 201 {callSid, carrier, to, from, profile, status}
// The dial policy (docs/security.md) and the do-not-call list apply before anything is placed: a
// refused number answers 403 CALLBRIDGE_DIAL_BLOCKED with the rule.
// The call counts against admission like an inbound one: refused with 503 while this instance is
// draining or at capacity. Once answered it is bridged to the agent exactly as an inbound call is,
// pre-warmed at the answer, and its record says `direction: outbound`.
import type { FastifyInstance } from 'fastify';
import { placeholders, renderTemplate } from '../agent/placeholders.js';
import type { Admission } from '../call/carrier-port.js';
import type { OutboundAmd } from '../call/outbound/outbound-context.js';
import type { AgentProfile } from '../config/types.js';
import { BadRequestError, CARRIER_API_ERROR_CODE, DialBlockedError, UnavailableError } from '../errors.js';
import { readRecordingSettings, type RecordingSettings } from '../config/recording.js';
import { normalizePhone } from '../outbound/phone.js';
import type { OutboundCall } from '../outbound/ports.js';
import { voicemailAudioUrlProblem } from '../outbound/voicemail-audio-url.js';
import type { DialPolicy } from '../trust/dial-policy.js';
import type { FetchPolicy } from '../trust/fetch-policy.js';
import { routeSchema, typed } from './schemas.js';

export interface PlaceCallDeps {
  profiles: Readonly<Record<string, AgentProfile>>;
  defaultProfile: string;
  /** The carriers that can place calls here; empty: none. */
  carriers: readonly string[];
  /** Whether this instance takes a new call now, as for an inbound call of `carrier`. */
  admit(carrier: string): Admission;
  dialPolicy: DialPolicy;
  /** A voicemail `audioUrl` at an address it refuses is refused at once (it is checked again when fetched). */
  fetchPolicy?: FetchPolicy;
  /** Whether the number is on the do-not-call list. */
  isDoNotCall(number: string): Promise<boolean>;
  place(call: OutboundCall): Promise<{ carrier: string; callSid: string }>;
}

const FIELDS = new Set(['to', 'from', 'profile', 'carrier', 'variables', 'amd', 'recording']);
const MAX_VARIABLES = 50;
const MAX_VARIABLE_CHARS = 500;
const MAX_VOICEMAIL_CHARS = 1000;
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

function phone(value: unknown, field: string, policy?: DialPolicy): string {
  if (typeof value !== 'string') throw new BadRequestError(`${field} must be a phone number in E.164`);
  const checked = normalizePhone(value);
  if (!checked.ok) {
    // An emergency number or a short code is no valid number either: the refusal says which it is.
    if (policy && /^\s*\+/.test(value)) policy.assert(value.trim(), field);
    throw new BadRequestError(`${field}: ${checked.reason}`);
  }
  policy?.assert(checked.e164, field);
  return checked.e164;
}

function variablesOf(value: unknown): Record<string, string> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new BadRequestError('variables must be an object of names to text');
  }
  const entries = Object.entries(value);
  if (entries.length > MAX_VARIABLES) throw new BadRequestError(`variables: at most ${MAX_VARIABLES}`);
  const variables: Record<string, string> = {};
  for (const [name, raw] of entries) {
    if (!VARIABLE_NAME.test(name))
      throw new BadRequestError('variables: a name must be letters, digits and _');
    if (typeof raw !== 'string' && typeof raw !== 'number' && typeof raw !== 'boolean') {
      throw new BadRequestError(`variables.${name} must be text`);
    }
    const text = String(raw);
    if (text.length > MAX_VARIABLE_CHARS) {
      throw new BadRequestError(`variables.${name} is longer than ${MAX_VARIABLE_CHARS} characters`);
    }
    variables[name] = text;
  }
  return variables;
}

const AMD_SHAPE =
  '{"mode": "voicemail"|"hangup"|"off", "voicemail": {"text": …, "audioUrl": "https://…"}} (one or both)';

function amdOf(
  value: unknown,
  variables: Record<string, string>,
  fetchPolicy: FetchPolicy | undefined,
): OutboundAmd | null {
  if (value === undefined || value === null || value === false) return null;
  if (typeof value !== 'object' || Array.isArray(value))
    throw new BadRequestError(`amd must be ${AMD_SHAPE}`);
  const { mode, voicemail, ...rest } = value as { mode?: unknown; voicemail?: unknown };
  const extra = Object.keys(rest)[0];
  if (extra !== undefined)
    throw new BadRequestError(`amd: unknown field ${JSON.stringify(extra.slice(0, 40))}`);
  if (mode === 'off') return null;
  if (mode !== 'voicemail' && mode !== 'hangup') {
    throw new BadRequestError('amd.mode must be voicemail, hangup or off');
  }
  if (mode === 'hangup') {
    if (voicemail !== undefined) throw new BadRequestError('amd.voicemail is only used with mode voicemail');
    return { mode, voicemailText: null, voicemailAudioUrl: null };
  }
  if (typeof voicemail !== 'object' || voicemail === null || Array.isArray(voicemail)) {
    throw new BadRequestError('amd.voicemail must be {"text": …} or {"audioUrl": "https://…"}');
  }
  const { text, audioUrl, ...others } = voicemail as { text?: unknown; audioUrl?: unknown };
  const other = Object.keys(others)[0];
  if (other !== undefined) {
    throw new BadRequestError(`amd.voicemail: unknown field ${JSON.stringify(other.slice(0, 40))}`);
  }
  // With both, the recording plays and the text is what is left when it cannot be.
  if (audioUrl !== undefined) {
    const problem = voicemailAudioUrlProblem(audioUrl);
    if (problem !== null) throw new BadRequestError(`amd.voicemail.audioUrl ${problem}`);
    const refused = fetchPolicy?.urlProblem(audioUrl as string) ?? null;
    if (refused !== null) throw new BadRequestError(`amd.voicemail.audioUrl: ${refused}`);
  }
  if (text === undefined && audioUrl !== undefined) {
    return { mode, voicemailText: null, voicemailAudioUrl: audioUrl as string };
  }
  if (typeof text !== 'string' || text.trim() === '' || text.length > MAX_VOICEMAIL_CHARS) {
    throw new BadRequestError(
      `amd.voicemail needs a text (the message, 1 to ${MAX_VOICEMAIL_CHARS} characters) or an audioUrl`,
    );
  }
  return {
    mode,
    voicemailText: renderTemplate(text, variables),
    voicemailAudioUrl: (audioUrl as string | undefined) ?? null,
  };
}

/** The request, validated; every placeholder the call will speak has a value, or it is refused now. */
export function placeCallRequest(
  body: unknown,
  deps: Omit<PlaceCallDeps, 'admit' | 'place' | 'dialPolicy' | 'isDoNotCall'> & { dialPolicy?: DialPolicy },
): OutboundCall {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new BadRequestError('the body must be a JSON object: {"to": "+1555…"}');
  }
  const unknown = Object.keys(body).filter((key) => !FIELDS.has(key));
  if (unknown.length > 0)
    throw new BadRequestError(`unknown field ${JSON.stringify(unknown[0]!.slice(0, 40))}`);
  const b = body as Record<string, unknown>;
  const to = phone(b.to, 'to', deps.dialPolicy);
  const from = b.from === undefined || b.from === null ? null : phone(b.from, 'from', deps.dialPolicy);
  const profile = b.profile ?? deps.defaultProfile;
  if (typeof profile !== 'string' || !Object.hasOwn(deps.profiles, profile)) {
    throw new BadRequestError(`profile must be one of: ${Object.keys(deps.profiles).join(', ')}`);
  }
  const carrier = b.carrier ?? null;
  if (carrier !== null && (typeof carrier !== 'string' || !deps.carriers.includes(carrier))) {
    throw new BadRequestError(`carrier must be one of: ${deps.carriers.join(', ')}`);
  }
  const variables = variablesOf(b.variables);
  let amd: OutboundAmd | null;
  try {
    amd = amdOf(b.amd, variables, deps.fetchPolicy);
  } catch (err) {
    if ((err as { code?: string }).code === 'CALLBRIDGE_TEMPLATE_VARIABLE_MISSING') {
      throw new BadRequestError(`amd.voicemail.text: ${(err as Error).message} in variables`);
    }
    throw err;
  }
  const agent = deps.profiles[profile]!;
  for (const [where, text] of [
    ['prompt', agent.prompt],
    ['greeting', agent.greeting ?? ''],
  ] as const) {
    const missing = placeholders(text).filter((name) => !(variables[name] ?? '').trim());
    if (missing.length > 0) {
      throw new BadRequestError(
        `the profile's ${where} uses ${missing.map((n) => `{{${n}}}`).join(', ')}: give a value in variables`,
      );
    }
  }
  let recording: RecordingSettings | null = null;
  if (b.recording !== undefined && b.recording !== null) {
    const read = readRecordingSettings(b.recording);
    if (!read.ok) throw new BadRequestError(read.problem);
    recording = read.settings;
    // The consent's audioUrl is fetched by the server like a voicemail's: refused at once alike.
    const consentUrl =
      recording.consent !== null && 'audioUrl' in recording.consent ? recording.consent.audioUrl : null;
    const refused = consentUrl === null ? null : (deps.fetchPolicy?.urlProblem(consentUrl) ?? null);
    if (refused !== null) throw new BadRequestError(`recording.consent.audioUrl: ${refused}`);
  }
  // A single call: no campaign attempt.
  return {
    to,
    from,
    carrier,
    profile,
    variables,
    amd,
    recording,
    attemptId: null,
    campaignId: null,
    contact: null,
  };
}

export function registerPlaceCallRoutes(app: FastifyInstance, deps: PlaceCallDeps): void {
  const schema = routeSchema('/v1/calls', 'post', 'Place one outbound call', 502, 503);
  typed(app).post('/calls', { config: { role: 'operator' }, schema }, async (req, reply) => {
    if (deps.carriers.length === 0) {
      throw new UnavailableError('no carrier can place outbound calls on this server');
    }
    const request = placeCallRequest(req.body, deps);
    if (await deps.isDoNotCall(request.to)) {
      throw new DialBlockedError(`to: ${request.to} is on the do-not-call list`);
    }
    const admission = deps.admit(request.carrier ?? deps.carriers[0]!);
    if (admission !== 'admitted') {
      throw new UnavailableError(
        admission === 'draining'
          ? 'this instance is draining: no new calls'
          : 'this instance is at its call capacity: try again shortly',
      );
    }
    let placed: { carrier: string; callSid: string };
    try {
      placed = await deps.place(request);
    } catch (err) {
      const { code, retryable } = err as { code?: unknown; retryable?: unknown };
      if (code !== CARRIER_API_ERROR_CODE) throw err;
      // The carrier's refusal, in words that carry no secret (carrier-api-error messages never do).
      return reply.code(502).send({
        error: { code, message: (err as Error).message, retryable: retryable === true },
      });
    }
    req.log.info(
      { carrier: placed.carrier, callSid: placed.callSid, profile: request.profile },
      'outbound call placed',
    );
    await req.audit('call.place', placed.callSid, { to: request.to, carrier: placed.carrier });
    return reply.code(201).send({
      callSid: placed.callSid,
      carrier: placed.carrier,
      to: request.to,
      from: request.from,
      profile: request.profile,
      direction: 'outbound',
      status: 'queued',
    });
  });
}
