// What one carrier's simulated REST API is made of: routes in that carrier's own paths and shapes,
// answered from the shared call log.
import type { IncomingHttpHeaders } from 'node:http';
import type { SimCallLog } from './call-log.js';

export interface SimApiRequest {
  method: string;
  /** The path without its query. */
  path: string;
  query: URLSearchParams;
  /** The `:name` segments of the route's path, decoded. */
  params: Record<string, string>;
  headers: IncomingHttpHeaders;
  /** The body read as JSON, or as a form, by its content type; undefined when empty. */
  body: unknown;
}

export interface SimApiReply {
  status: number;
  /** Sent as JSON; no body when undefined. */
  body?: unknown;
}

/** An outbound call the API accepted, for the simulated callee to answer (src/sim/callee/). */
export interface PlacedSimCall {
  carrier: string;
  callSid: string;
  /** The id the create request was answered with, where it is not the call's (Plivo `request_uuid`). */
  requestId?: string;
  accountSid: string;
  to: string;
  from: string;
  /** Where the carrier fetches the call's instructions once answered (Twilio `Url`). */
  answerUrl: string;
  /** Where call progress goes (Twilio `StatusCallback`); null: nowhere. */
  statusUrl: string | null;
  /** Where the detection verdict goes (Twilio `AsyncAmdStatusCallback`); null: no detection. */
  amdUrl: string | null;
  /** The client state the call was created with, returned on its webhooks (Telnyx). */
  clientState?: string | null;
  /** The opaque value the server asked to be carried with the call (Exotel `CustomField`). */
  customField?: string | null;
}

export interface SimApiContext {
  calls: SimCallLog;
  /** A fresh random id, for calls the API creates. */
  newId(): string;
  /** Hands an accepted outbound call to the simulated callee. */
  placed(call: PlacedSimCall): void;
}

export interface SimApiRoute {
  method: 'GET' | 'POST' | 'DELETE' | 'PUT';
  /** `/v2/calls/:callSid/actions/:action`: literal segments and `:name` captures. */
  path: string;
  handle(req: SimApiRequest, ctx: SimApiContext): SimApiReply;
}

export interface SimCarrierApi {
  carrier: string;
  /** The carrier's refusal of a request without its kind of credentials, or null to go on. */
  authenticate(req: SimApiRequest): SimApiReply | null;
  routes: readonly SimApiRoute[];
}

/** Whether a request field is an http(s) URL: what each carrier's API asks of a callback address. */
export function httpUrl(value: unknown): value is string {
  if (typeof value !== 'string' || !URL.canParse(value)) return false;
  const { protocol } = new URL(value);
  return protocol === 'http:' || protocol === 'https:';
}
