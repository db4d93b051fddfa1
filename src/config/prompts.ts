// config/prompts.json (optional): how the fixed things a caller hears without an agent are rendered
// by the speak endpoints, checked against the service's rules when configuration loads
// (docs/protocols/speech-service.md sections 6, 7, 10 and 11): `v1` speaks `lyric-` voices, `v2` `turn-` voices; `speed`
// in its version's range; formats in an encoding a phone leg carries. Without the file nothing is
// rendered and the bundled recordings play.
//
//   {"voice": {"version": "v2", "model": "turn-kit-en", "speed": 1.0},
//    "render": "start",
//    "formats": [{"encoding": "mulaw", "sampleRate": 8000}],
//    "texts": {"unavailable": "…", "drain_goodbye": "…", "at_capacity": "…"}}
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { type Static, Type } from '@sinclair/typebox';
import { PHONE_SAMPLE_RATES } from '../audio/format.js';
import { checkShape, displayPath, fileError, readJson } from './json-file.js';
import {
  RAW_SPEAK_ENCODINGS,
  type SpeakVersion,
  speakModelProblem,
  speakSpeedProblem,
} from './speak-rules.js';

/** The fixed prompts; `voicemail` is a campaign's text, given per call. */
export const PROMPT_KINDS = ['unavailable', 'drain_goodbye', 'at_capacity', 'voicemail'] as const;
export type PromptKind = (typeof PROMPT_KINDS)[number];
export type FixedPromptKind = Exclude<PromptKind, 'voicemail'>;

/** What each fixed prompt says unless the file says otherwise. */
export const DEFAULT_PROMPT_TEXTS: Readonly<Record<FixedPromptKind, string>> = Object.freeze({
  unavailable: "I'm sorry, our assistant is unavailable right now. Please call back later.",
  drain_goodbye: "I'm sorry, I have to end the call now. Please call back in a moment. Goodbye.",
  at_capacity: "Sorry, we can't take your call right now. Please call back in a few minutes.",
});

/** Characters a prompt may hold (a speak request's text). */
export const MAX_PROMPT_CHARS = 2000;

export interface PromptVoice {
  version: SpeakVersion;
  model: string;
  speed?: number;
}

export interface PromptFormat {
  encoding: (typeof RAW_SPEAK_ENCODINGS)[number];
  sampleRate: number;
}

export interface PromptsConfig {
  voice: PromptVoice;
  /** `start`: the fixed prompts are rendered in every format when the server starts; `first_use`: when first asked for. */
  render: 'start' | 'first_use';
  formats: PromptFormat[];
  texts: Record<FixedPromptKind, string>;
}

const PromptText = Type.String({ minLength: 1, maxLength: MAX_PROMPT_CHARS });

const PromptsFile = Type.Object(
  {
    voice: Type.Object(
      {
        version: Type.Optional(
          Type.Union([Type.Literal('v1'), Type.Literal('v2')], { errorMessage: 'must be "v1" or "v2"' }),
        ),
        model: Type.String({ minLength: 1 }),
        speed: Type.Optional(Type.Number()),
      },
      { additionalProperties: false },
    ),
    render: Type.Optional(
      Type.Union([Type.Literal('start'), Type.Literal('first_use')], {
        errorMessage: 'must be "start" or "first_use"',
      }),
    ),
    formats: Type.Optional(
      Type.Array(
        Type.Object(
          {
            encoding: Type.Union(
              RAW_SPEAK_ENCODINGS.map((e) => Type.Literal(e)),
              { errorMessage: `must be one of ${RAW_SPEAK_ENCODINGS.join(', ')} (what a phone leg carries)` },
            ),
            sampleRate: Type.Union(
              PHONE_SAMPLE_RATES.map((rate) => Type.Literal(rate)),
              { errorMessage: `must be one of ${PHONE_SAMPLE_RATES.join(', ')}` },
            ),
          },
          { additionalProperties: false },
        ),
        { minItems: 1, maxItems: 6 },
      ),
    ),
    texts: Type.Optional(
      Type.Object(
        {
          unavailable: Type.Optional(PromptText),
          drain_goodbye: Type.Optional(PromptText),
          at_capacity: Type.Optional(PromptText),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
type PromptsFile = Static<typeof PromptsFile>;

export function loadPrompts(configDir: string, cwd: string): PromptsConfig | null {
  const file = join(configDir, 'prompts.json');
  if (!existsSync(file)) return null;
  const shown = displayPath(file, cwd);
  const parsed: PromptsFile = checkShape(PromptsFile, readJson(file, shown), shown);
  const version = parsed.voice.version ?? 'v1';
  const modelProblem = speakModelProblem(version, parsed.voice.model, parsed.voice.version === undefined);
  if (modelProblem !== null) throw fileError(shown, '/voice/model', modelProblem);
  const voice: PromptVoice = { version, model: parsed.voice.model };
  if (parsed.voice.speed !== undefined) {
    const speedProblem = speakSpeedProblem(version, parsed.voice.model, parsed.voice.speed);
    if (speedProblem !== null) throw fileError(shown, '/voice/speed', speedProblem);
    voice.speed = parsed.voice.speed;
  }
  const formats = (parsed.formats ?? [{ encoding: 'mulaw', sampleRate: 8000 }]) as PromptFormat[];
  return {
    voice,
    render: parsed.render ?? 'first_use',
    formats: formats.filter(
      (f, i) => formats.findIndex((g) => g.encoding === f.encoding && g.sampleRate === f.sampleRate) === i,
    ),
    texts: { ...DEFAULT_PROMPT_TEXTS, ...parsed.texts },
  };
}
