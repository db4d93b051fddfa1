// The events of every stream the API serves: the server-sent event feeds (their event names and
// data) and the listen-in socket's text messages.
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { CampaignProgressEvent } from './campaigns.js';
import { LiveCall } from './calls.js';
import { OneOf, Str } from './common.js';

/** `GET /v1/calls/live/events`: every live call of the deployment, then each change. */
export const LiveCallsFeed = {
  snapshot: Type.Object({ calls: Type.Array(LiveCall) }),
  started: LiveCall,
  updated: LiveCall,
  ended: Type.Object({ callSid: Str() }),
} as const;

/** What happens on a call, as observers see it (`GET /v1/calls/:callSid/events`, `callbridge call`). */
export const CallEvent = Type.Union([
  Type.Object({
    type: Type.Literal('transcript'),
    role: OneOf(['user', 'assistant'] as const),
    content: Type.String(),
    interrupted: Type.Optional(Type.Boolean()),
  }),
  Type.Object({ type: Type.Literal('barge-in') }),
  Type.Object({ type: Type.Literal('function'), name: Type.String(), outcome: Type.String() }),
  Type.Object({ type: Type.Literal('dtmf'), digits: Type.String() }),
  Type.Object({ type: Type.Literal('end'), reason: Type.String() }),
]);
export type CallEvent = Static<typeof CallEvent>;

/** `GET /v1/calls/:callSid/events`: each event is named by its type; the stream ends after `end`. */
export const CallEventsFeed = {
  transcript: Type.Extract(CallEvent, Type.Object({ type: Type.Literal('transcript') })),
  'barge-in': Type.Extract(CallEvent, Type.Object({ type: Type.Literal('barge-in') })),
  function: Type.Extract(CallEvent, Type.Object({ type: Type.Literal('function') })),
  dtmf: Type.Extract(CallEvent, Type.Object({ type: Type.Literal('dtmf') })),
  end: Type.Extract(CallEvent, Type.Object({ type: Type.Literal('end') })),
} as const;

/** `GET /v1/campaigns/:id/events`: the campaign with its dial rate, at once and on each change. */
export const CampaignFeed = { progress: CampaignProgressEvent } as const;

/** The data of each named event of a feed. */
export type FeedEvents<Feed extends Record<string, TSchema>> = {
  [Name in keyof Feed]: Static<Feed[Name]>;
};

/** `GET /v1/calls/:callSid/listen`: the socket's text messages around the binary PCM16 frames. */
export const ListenMessage = Type.Union([
  Type.Object({
    type: Type.Literal('format'),
    sampleRate: Type.Integer(),
    channels: Type.Literal(2),
    encoding: Type.Literal('pcm_s16le'),
  }),
  Type.Object({ type: Type.Literal('end') }),
]);
export type ListenMessage = Static<typeof ListenMessage>;
