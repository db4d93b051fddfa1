// The last guard before anything is printed: every secret value the environment holds is cut out
// of the lines, whatever message it may have travelled in (an error from a library, a URL).
import { type Env, envString, isSecretName } from '../config/env.js';
import type { CheckLine } from './report.js';

/** Shorter values would blank out ordinary words; a secret that short guards nothing anyway. */
const MIN_REDACTED_LENGTH = 4;

export function redactLines(lines: CheckLine[], env: Env): CheckLine[] {
  const secrets = secretValues(env);
  if (secrets.length === 0) return lines;
  return lines.map((line) => ({
    ...line,
    text: secrets.reduce((text, secret) => text.split(secret).join('[redacted]'), line.text),
  }));
}

function secretValues(env: Env): string[] {
  const values = new Set<string>();
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || !isSecretName(name)) continue;
    values.add(value.trim());
    for (const entry of value.split(',')) values.add(entry.trim());
  }
  const redis = envString(env, 'REDIS_URL');
  if (redis !== undefined && URL.canParse(redis)) {
    const { password } = new URL(redis);
    values.add(password);
    try {
      values.add(decodeURIComponent(password));
    } catch {
      // Not percent-encoded after all: the raw form is already listed.
    }
  }
  // Longest first, so a secret that contains another is cut out whole.
  return [...values].filter((v) => v.length >= MIN_REDACTED_LENGTH).sort((a, b) => b.length - a.length);
}
