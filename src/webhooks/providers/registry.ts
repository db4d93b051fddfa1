// The gateway's provider map (docs/protocols/webhook-providers.md section 8).
// Adding a provider: one file in this folder and one entry here.
import type { WebhookProvider } from '../provider.js';
import { codeProvider } from './code.js';
import { deployProvider } from './deploy.js';
import { inboxProvider } from './inbox.js';
import { paymentsProvider } from './payments.js';
import { tasksProvider } from './tasks.js';

export const PROVIDERS: readonly WebhookProvider[] = [
  tasksProvider,
  inboxProvider,
  deployProvider,
  codeProvider,
  paymentsProvider,
];

/** Every secret name some provider reads: the keys a secrets file may hold. */
export function secretNamesOf(providers: readonly WebhookProvider[]): string[] {
  return [...new Set(providers.flatMap((provider) => provider.secretNames))];
}
