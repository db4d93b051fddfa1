// Shapes of the files in the config folder. Structure, types and ranges live here; rules that
// span fields (speak versions, unique function names, files that must exist) live with the loaders.
// `errorMessage` on a schema replaces the generic wording when that node fails; `redactValue`
// keeps the offending value out of the message.
import { type Static, Type } from '@sinclair/typebox';
import { REGIONS } from './types.js';

export const E164 = /^\+[1-9]\d{6,14}$/;
export const PROFILE_NAME = /^[a-z0-9][a-z0-9_-]*$/;
export const FUNCTION_NAME = /^[a-zA-Z_][a-zA-Z0-9_]{0,63}$/;

export const E164_TEXT = 'an E.164 number (+ then 7 to 15 digits)';

const DialTarget = Type.String({
  pattern: `${E164.source}|^sip:\\S+$`,
  errorMessage: `must be ${E164_TEXT} or a sip: address`,
});
const NonEmpty = (options: Record<string, unknown> = {}) => Type.String({ minLength: 1, ...options });
const Millis = (min: number, max: number) => Type.Integer({ minimum: min, maximum: max });

// ---- config/regions.json ----

const RegionEntryFile = Type.Object(
  { agentUrl: NonEmpty(), speechApiUrl: NonEmpty() },
  { additionalProperties: false },
);

export const RegionsFile = Type.Object(
  Object.fromEntries(REGIONS.map((region) => [region, RegionEntryFile])) as Record<
    (typeof REGIONS)[number],
    typeof RegionEntryFile
  >,
  { additionalProperties: false },
);
export type RegionsFile = Static<typeof RegionsFile>;

// ---- config/numbers.json ----

export const NumbersFile = Type.Object(
  {
    default: NonEmpty(),
    routes: Type.Optional(Type.Record(Type.String(), NonEmpty())),
  },
  { additionalProperties: false },
);
export type NumbersFile = Static<typeof NumbersFile>;

// ---- config/agents/<name>.json ----

/** Provider objects pass extra fields (temperature, endpoint options) through to the agent untouched. */
const Provider = Type.Object(
  { type: NonEmpty(), model: Type.Optional(NonEmpty()) },
  { additionalProperties: true },
);

const SpeakProviderFile = Type.Object(
  {
    type: NonEmpty(),
    version: Type.Optional(
      Type.Union([Type.Literal('v1'), Type.Literal('v2')], { errorMessage: 'must be "v1" or "v2"' }),
    ),
    model: NonEmpty(),
  },
  { additionalProperties: true },
);

/** One entry of `think`: the file may give one object or a list of them (a fallback chain). */
export const ThinkEntryFile = Type.Object(
  { provider: Provider, endpoint: Type.Optional(Type.Record(Type.String(), Type.Unknown())) },
  { additionalProperties: false },
);
export type ThinkEntryFile = Static<typeof ThinkEntryFile>;

/** One entry of `speak`: one object or a list of them, tried in order. */
export const SpeakEntryFile = Type.Object(
  { provider: SpeakProviderFile, endpoint: Type.Optional(Type.Record(Type.String(), Type.Unknown())) },
  { additionalProperties: false },
);
export type SpeakEntryFile = Static<typeof SpeakEntryFile>;

/** Longest fallback chain a profile may list: each entry is a provider the agent may fall back to. */
export const MAX_PROVIDER_CHAIN = 5;

const UpdateKind = Type.Union([Type.Literal('speak'), Type.Literal('think'), Type.Literal('listen')], {
  errorMessage: 'must be "speak", "think" or "listen"',
});

const HttpFunctionFile = Type.Object(
  {
    name: Type.String({
      pattern: FUNCTION_NAME.source,
      errorMessage: 'must be a letter or _, then up to 63 letters, digits or _',
    }),
    description: NonEmpty(),
    parameters: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    url: NonEmpty(),
    secret: Type.Optional(NonEmpty({ redactValue: true })),
    timeoutMs: Type.Optional(Millis(1, 30_000)),
    mayUpdate: Type.Optional(Type.Array(UpdateKind, { uniqueItems: true })),
  },
  { additionalProperties: false },
);

export const ProfileFile = Type.Object(
  {
    language: Type.Optional(NonEmpty({ maxLength: 35 })),
    prompt: NonEmpty(),
    greeting: Type.Optional(NonEmpty()),
    listen: Type.Optional(Type.Object({ provider: Provider }, { additionalProperties: false })),
    // One entry or a list of them: checked entry by entry by the profile loader, so a problem is
    // named at its own pointer (`/think/1/provider/type`) rather than as a failed union.
    think: Type.Unknown(),
    speak: Type.Optional(Type.Unknown()),
    endCall: Type.Optional(Type.Boolean()),
    transfer: Type.Optional(
      Type.Object({ allow: Type.Array(DialTarget, { uniqueItems: true }) }, { additionalProperties: false }),
    ),
    functions: Type.Optional(Type.Array(HttpFunctionFile)),
    dtmf: Type.Optional(
      Type.Object(
        {
          enabled: Type.Optional(Type.Boolean()),
          interDigitTimeoutMs: Type.Optional(Millis(1, 60_000)),
          terminator: Type.Optional(
            Type.Union([Type.Literal('#'), Type.Literal('*'), Type.Literal('')], {
              errorMessage: 'must be "#", "*" or "" (no terminator)',
            }),
          ),
          maxDigits: Type.Optional(Type.Integer({ minimum: 1, maximum: 64 })),
        },
        { additionalProperties: false },
      ),
    ),
    limits: Type.Optional(
      Type.Object(
        {
          // 0 disables each limit.
          silencePromptMs: Type.Optional(Millis(0, 3_600_000)),
          silenceHangupMs: Type.Optional(Millis(0, 3_600_000)),
          maxCallMs: Type.Optional(Millis(0, 86_400_000)),
        },
        { additionalProperties: false },
      ),
    ),
    fallback: Type.Optional(
      Type.Object(
        { audioFile: Type.Optional(NonEmpty()), transferTo: Type.Optional(DialTarget) },
        { additionalProperties: false },
      ),
    ),
    tags: Type.Optional(Type.Array(NonEmpty({ maxLength: 128 }), { uniqueItems: true })),
    // Checked by the profile loader with the reader calls and campaigns share (recording.ts).
    recording: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: false },
);
export type ProfileFile = Static<typeof ProfileFile>;
