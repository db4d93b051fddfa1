// `{{name}}` placeholders in the profile's prompt and greeting and in the voicemail text, filled
// from each contact's variables. A placeholder a contact has no value for is refused when the
// contact is added and checked again when the campaign starts, so rendering on a live call never
// meets one.
import type { AgentProfile } from '../config/types.js';
import type { CampaignSpec } from './records.js';

const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

/** The distinct placeholder names in `text`, in order of first use. */
export function placeholders(text: string): string[] {
  return [...new Set([...text.matchAll(PLACEHOLDER)].map((m) => m[1]!))];
}

/** A variable has a value when it is present and not blank. */
export function hasValue(variables: Readonly<Record<string, string>>, name: string): boolean {
  return Object.hasOwn(variables, name) && (variables[name] ?? '').trim() !== '';
}

export class MissingVariableError extends Error {
  readonly code = 'CALLBRIDGE_TEMPLATE_VARIABLE_MISSING';
  constructor(readonly names: string[]) {
    super(`no value for ${names.map((n) => `{{${n}}}`).join(', ')}`);
    this.name = 'MissingVariableError';
  }
}

/** `text` with every placeholder replaced by its value; throws MissingVariableError if any has none. */
export function renderTemplate(text: string, variables: Readonly<Record<string, string>>): string {
  const missing = placeholders(text).filter((name) => !hasValue(variables, name));
  if (missing.length > 0) throw new MissingVariableError(missing);
  return text.replace(PLACEHOLDER, (_, name: string) => variables[name]!.trim());
}

/** Placeholder name → where it is used (`prompt`, `greeting`, `voicemail`). */
export type RequiredVariables = Map<string, string[]>;

/** Every placeholder a campaign's calls will render, with where each appears. */
export function requiredVariables(spec: CampaignSpec, profile: AgentProfile | undefined): RequiredVariables {
  const texts: Array<[string, string | undefined]> = [
    ['prompt', profile?.prompt],
    ['greeting', profile?.greeting],
    ['voicemail', spec.amd.mode === 'voicemail' ? spec.amd.voicemail?.text : undefined],
  ];
  const required: RequiredVariables = new Map();
  for (const [where, text] of texts) {
    for (const name of placeholders(text ?? '')) required.set(name, [...(required.get(name) ?? []), where]);
  }
  return required;
}

/** Why a contact with `variables` cannot be called, or null. */
export function missingVariablesProblem(
  required: RequiredVariables,
  variables: Readonly<Record<string, string>>,
): string | null {
  const missing = [...required].filter(([name]) => !hasValue(variables, name));
  if (missing.length === 0) return null;
  return `no value for ${missing.map(([name, where]) => `{{${name}}} (used in the ${where.join(' and ')})`).join(', ')}`;
}
