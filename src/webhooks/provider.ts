// What a webhook provider is (docs/protocols/webhook-providers.md section 2): how its requests are verified, how its
// payloads become events, which events may go through the shared queue. One file per provider
// under providers/, one entry in providers/registry.ts.
import type { IncomingHttpHeaders } from 'node:http';

/** A request as received: verification only ever looks at these bytes (docs/protocols/webhook-providers.md section 1). */
export interface WebhookRequest {
  rawBody: Buffer;
  headers: IncomingHttpHeaders;
}

/** Active secrets under a secret name, several during rotation; empty when none is configured. */
export type SecretLookup = (secretName: string) => readonly string[];

export type AuthFailureReason = 'missing' | 'malformed' | 'mismatch' | 'expired' | 'no_secret';

export type Verification =
  | {
      ok: true /** Which webhook type matched, for providers with several (inbox app or rules). */;
      variant?: string;
    }
  | { ok: false; reason: AuthFailureReason; message: string };

/** A provider's reading of a verified payload. */
export type Normalization =
  | {
      kind: 'event' /** Provider-local event, e.g. `workflow_run.completed`. */;
      event: string;
      deliveryId: string | null;
    }
  /** A type the provider does not list: acknowledged and ignored (docs/protocols/webhook-providers.md section 2). */
  | { kind: 'ignored'; type: string };

/** The normalized event (docs/protocols/webhook-providers.md section 5): what notification functions receive. */
export interface NormalizedEvent {
  /** `<provider>/<event>` (docs/protocols/webhook-providers.md section 5), e.g. `code/workflow_run.completed`. */
  name: string;
  provider: string;
  event: string;
  /** Present on every event (docs/protocols/webhook-providers.md section 5). */
  idempotencyKey: string;
  receivedAt: string;
  /** The provider's JSON body. */
  payload: unknown;
}

/** Delivers one event onwards; rejects when it could not, so the caller retries. */
export type NotificationFunction = (event: NormalizedEvent) => Promise<void>;

export interface WebhookProvider {
  /** The `<provider>` path segment. */
  readonly name: string;
  /** Secret names it reads (inbox reads its application and its rules secret). */
  readonly secretNames: readonly string[];
  /** Served only while one of its secrets is configured. */
  readonly onlyWithSecret?: boolean;
  /** Events that go through the shared queue when the provider is in QUEUE_PILOTS (docs/protocols/webhook-providers.md section 6). */
  readonly queueEvents: readonly string[];
  verify(request: WebhookRequest, secrets: SecretLookup, nowMs: number): Verification;
  /** A validation challenge to answer instead of an event, checked after verification. */
  challenge?(request: WebhookRequest, verification: Verification & { ok: true }): string | null;
  normalize(request: WebhookRequest, body: unknown): Normalization;
  /** Its own notification function; default: post to the operator gateway (notifier.ts). */
  readonly notify?: NotificationFunction;
}
