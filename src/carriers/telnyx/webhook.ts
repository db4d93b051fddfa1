// Reads a Telnyx Call Control webhook (docs/protocols/telnyx.md section 2): JSON
// `{data: {event_type, id, payload: {call_control_id, from, to, direction, client_state, …}}}`.
// Strict about what callbridge acts on, tolerant of everything else.
import { BadRequestError } from '../../errors.js';
import { isCarrierId, isObject, type JsonObject } from '../wire.js';

export interface TelnyxWebhook {
  eventType: string;
  /** Telnyx's id of this delivery, when it sent one. */
  id: string | undefined;
  payload: JsonObject;
}

export interface TelnyxCallFields {
  callSid: string;
  from: string;
  to: string;
  /** `incoming` or `outgoing` as Telnyx says; anything else as given, bounded. */
  direction: string;
  clientState: unknown;
}

const EVENT_TYPE = /^[a-z0-9_.]{1,64}$/;
const MAX_PARTY_CHARS = 256;

export function readTelnyxWebhook(raw: Buffer): TelnyxWebhook {
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new BadRequestError('telnyx webhook: body is not valid JSON');
  }
  if (!isObject(body) || !isObject(body.data))
    throw new BadRequestError('telnyx webhook: data must be an object');
  const { event_type: eventType, id, payload } = body.data;
  if (typeof eventType !== 'string' || !EVENT_TYPE.test(eventType)) {
    throw new BadRequestError('telnyx webhook: data.event_type must be a short event name');
  }
  if (payload !== undefined && !isObject(payload)) {
    throw new BadRequestError('telnyx webhook: data.payload must be an object');
  }
  return { eventType, id: isCarrierId(id) ? id : undefined, payload: payload ?? {} };
}

/** The call fields of a `call.*` event; a missing or malformed call id is a bad request. */
export function readCallFields(webhook: TelnyxWebhook): TelnyxCallFields {
  const { payload } = webhook;
  const callSid = payload.call_control_id;
  if (!isCarrierId(callSid)) {
    throw new BadRequestError(`telnyx ${webhook.eventType}: payload.call_control_id is missing or malformed`);
  }
  return {
    callSid,
    from: party(payload.from),
    to: party(payload.to),
    direction: typeof payload.direction === 'string' ? payload.direction.slice(0, 32) : '',
    clientState: payload.client_state,
  };
}

/** A calling or called party: a number or SIP address, or '' when absent or unreasonable. */
function party(value: unknown): string {
  return typeof value === 'string' && value.length <= MAX_PARTY_CHARS ? value : '';
}
