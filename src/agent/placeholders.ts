// `{{name}}` placeholders in the texts an agent speaks or is told (a profile's prompt and greeting,
// a campaign's voicemail), filled from a contact's variables. Campaigns refuse a contact that lacks
// a value before any call (src/outbound/template.ts); a live call renders what it was given.
import type { AgentProfile } from '../config/types.js';

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

/**
 * The profile with its prompt and greeting filled from `variables`. Placeholders were checked before
 * the call was placed; one left without a value (a profile edited since) is spoken as written rather
 * than failing a call that is already ringing.
 */
export function profileWithVariables(
  profile: AgentProfile,
  variables: Readonly<Record<string, string>>,
): AgentProfile {
  const fill = (text: string) =>
    text.replace(PLACEHOLDER, (whole, name: string) =>
      hasValue(variables, name) ? variables[name]!.trim() : whole,
    );
  return {
    ...profile,
    prompt: fill(profile.prompt),
    ...(profile.greeting === undefined ? {} : { greeting: fill(profile.greeting) }),
  };
}
