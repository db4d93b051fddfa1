// Every /v1 operation: its path (as /openapi.json writes it), method, and the schemas of its
// parameters, query string, body and successful answers. The routes take their schemas from here,
// and the console's client accepts only these paths, typed by these schemas.
import type { TSchema } from '@sinclair/typebox';
import { AuditPage, AuditQuery, CreatedKey, KeyBody, KeyList, Session, SessionBody } from './access.js';
import {
  CallPage,
  CallRecord,
  CallsQuery,
  ControlAnswer,
  PlaceCallBody,
  PlacedCall,
  RecordingControlAnswer,
  TransferAnswer,
  TransferBody,
  WavAudio,
} from './calls.js';
import {
  Campaign,
  CampaignInput,
  CampaignPage,
  CampaignsQuery,
  ContactPage,
  ContactsAdded,
  ContactsQuery,
  ContactsJson,
  CsvUpload,
} from './campaigns.js';
import { CallSidParams, CsvText, EventStream, IdParams, NoContent, NumberParams, ref } from './common.js';
import { DncAdded, DncEntry, DncJson, DncPage, DncQuery } from './dnc.js';
import { CallEventsFeed, CampaignFeed, LiveCallsFeed } from './events.js';
import { DeadLetterQuery, DeadLetters, Requeued } from './webhooks.js';

const csv = { ...CsvText, content: { 'text/csv': { schema: CsvText } } };
const stream = { ...EventStream, content: { 'text/event-stream': { schema: EventStream } } };
/** A body sent as JSON or as text/csv, each checked by its own schema. */
const jsonOrCsv = <T extends TSchema>(json: T) =>
  ({ content: { 'application/json': { schema: json }, 'text/csv': { schema: CsvUpload } } }) as const;

const byCall = { params: CallSidParams } as const;
const byId = { params: IdParams } as const;
const campaignAction = { ...byId, response: { 200: ref(Campaign) } } as const;

export const OPERATIONS = {
  '/v1/session': {
    post: { body: SessionBody, response: { 200: Session } },
    get: { response: { 200: Session } },
    delete: { response: { 204: NoContent } },
  },
  '/v1/sessions': { delete: { response: { 204: NoContent } } },
  '/v1/keys': {
    post: { body: KeyBody, response: { 201: CreatedKey } },
    get: { response: { 200: KeyList } },
  },
  '/v1/keys/{id}': { delete: { ...byId, response: { 204: NoContent } } },
  '/v1/audit': { get: { querystring: AuditQuery, response: { 200: AuditPage } } },
  '/v1/calls': {
    get: { querystring: CallsQuery, response: { 200: CallPage } },
    post: { body: PlaceCallBody, response: { 201: PlacedCall } },
  },
  '/v1/calls/{callSid}': { get: { ...byCall, response: { 200: ref(CallRecord) } } },
  '/v1/calls/{callSid}/hangup': { post: { ...byCall, response: { 200: ControlAnswer } } },
  '/v1/calls/{callSid}/transfer': {
    post: { ...byCall, body: TransferBody, response: { 200: TransferAnswer } },
  },
  '/v1/calls/{callSid}/recording': {
    get: { ...byCall, response: { 200: WavAudio, 206: WavAudio } },
    delete: { ...byCall, response: { 204: NoContent } },
  },
  '/v1/calls/{callSid}/recording/pause': { post: { ...byCall, response: { 200: RecordingControlAnswer } } },
  '/v1/calls/{callSid}/recording/resume': { post: { ...byCall, response: { 200: RecordingControlAnswer } } },
  '/v1/calls/{callSid}/listen': {
    get: { ...byCall, response: { 101: { description: 'switching to the WebSocket', type: 'null' } } },
  },
  '/v1/calls/live/events': { get: { response: { 200: stream }, feed: LiveCallsFeed } },
  '/v1/calls/{callSid}/events': { get: { ...byCall, response: { 200: stream }, feed: CallEventsFeed } },
  '/v1/campaigns': {
    post: { body: CampaignInput, response: { 201: ref(Campaign) } },
    get: { querystring: CampaignsQuery, response: { 200: CampaignPage } },
  },
  '/v1/campaigns/{id}': { get: { ...byId, response: { 200: ref(Campaign) } } },
  '/v1/campaigns/{id}/contacts': {
    post: {
      ...byId,
      body: jsonOrCsv(ContactsJson),
      response: { 200: ContactsAdded },
    },
    get: { ...byId, querystring: ContactsQuery, response: { 200: ContactPage } },
  },
  '/v1/campaigns/{id}/start': { post: campaignAction },
  '/v1/campaigns/{id}/pause': { post: campaignAction },
  '/v1/campaigns/{id}/resume': { post: campaignAction },
  '/v1/campaigns/{id}/cancel': { post: campaignAction },
  '/v1/campaigns/{id}/results.csv': { get: { ...byId, produces: ['text/csv'], response: { 200: csv } } },
  '/v1/campaigns/{id}/events': { get: { ...byId, response: { 200: stream }, feed: CampaignFeed } },
  '/v1/dnc': {
    get: { querystring: DncQuery, response: { 200: DncPage } },
    post: {
      body: jsonOrCsv(DncJson),
      response: { 200: DncAdded },
    },
  },
  '/v1/dnc/{number}': {
    get: { params: NumberParams, response: { 200: DncEntry } },
    delete: { params: NumberParams, response: { 204: NoContent } },
  },
  '/v1/webhooks/dead-letters': { get: { querystring: DeadLetterQuery, response: { 200: DeadLetters } } },
  '/v1/webhooks/dead-letters/{id}/retry': { post: { ...byId, response: { 202: Requeued } } },
} as const;

export type Operations = typeof OPERATIONS;
export type ApiPath = keyof Operations;
