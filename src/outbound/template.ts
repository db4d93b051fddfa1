// `{{name}}` placeholders in the profile's prompt and greeting and in the voicemail text, filled
// from each contact's variables. A placeholder a contact has no value for is refused when the
// contact is added and checked again when the campaign starts, so rendering on a live call never
// meets one.
import { hasValue, placeholders } from '../agent/placeholders.js';
import type { AgentProfile } from '../config/types.js';
import type { CampaignSpec } from '../store/campaign-records.js';

export { hasValue, MissingVariableError, placeholders, renderTemplate } from '../agent/placeholders.js';

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
