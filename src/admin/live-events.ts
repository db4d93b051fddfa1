// The event streams of the console (docs/console.md), all viewer-role:
//   GET /calls/live/events      snapshot, then started / updated / ended: every live call of the
//                               deployment, from one feed per instance shared by every console
//   GET /calls/:callSid/events  a live call's events (transcript, barge-in, DTMF, functions, end)
//   GET /campaigns/:id/events   progress: the campaign as GET /campaigns/:id shows it plus dialRate,
//                               at once and then whenever it changes (at most once a second), ending
//                               after completed or cancelled
import type { FastifyInstance } from 'fastify';
import type { CallEvent, CallEventFeed } from '../call/watch/events.js';
import type { LiveFeed } from '../fleet/live-feed.js';
import type { CampaignService } from '../outbound/service.js';
import type { Store } from '../store/store.js';
import { openEventStream } from './event-stream.js';
import { callSidOf } from './live-calls.js';
import { routeSchema, typed } from './schemas.js';

export interface LiveEventDeps {
  live: LiveFeed;
  feed: CallEventFeed;
  campaigns: CampaignService;
  store: Store;
  now: () => number;
  /** How often a followed campaign's progress is read. */
  campaignEveryMs?: number;
}

/** Dial rate: calls begun over this window, per second. */
export const DIAL_RATE_WINDOW_MS = 10_000;
const ENDED_STATES = new Set(['completed', 'cancelled']);
export function registerLiveEventRoutes(scope: FastifyInstance, deps: LiveEventDeps): void {
  const api = typed(scope);
  api.get(
    '/calls/live/events',
    {
      config: { role: 'viewer' },
      schema: routeSchema(
        '/v1/calls/live/events',
        'get',
        'Live calls as they start, change and end (server-sent events)',
        404,
      ),
    },
    async (req, reply) => {
      const events = openEventStream(req, reply);
      const { calls, stop } = await deps.live.follow((event) => {
        if (event.type === 'ended') events.send('ended', { callSid: event.callSid });
        else events.send(event.type, event.call);
      });
      events.onClose(stop);
      events.send('snapshot', { calls });
    },
  );

  api.get(
    '/calls/:callSid/events',
    {
      config: { role: 'viewer' },
      schema: routeSchema(
        '/v1/calls/{callSid}/events',
        'get',
        "A live call's events (server-sent events)",
        404,
      ),
    },
    async (req, reply) => {
      const callSid = callSidOf(req.params.callSid);
      const held: CallEvent[] = [];
      let forward: ((event: CallEvent) => void) | null = null;
      const unsubscribe = deps.feed.subscribe(callSid, (event) =>
        forward ? forward(event) : held.push(event),
      );
      await deps.feed.following?.(callSid).catch(() => {});
      const events = openEventStream(req, reply);
      events.onClose(unsubscribe);
      forward = (event) => {
        events.send(event.type, event);
        if (event.type === 'end') events.end();
      };
      for (const event of held.splice(0)) forward(event);
    },
  );

  api.get(
    '/campaigns/:id/events',
    {
      config: { role: 'viewer' },
      schema: routeSchema(
        '/v1/campaigns/{id}/events',
        'get',
        "A campaign's progress with its dial rate (server-sent events)",
        404,
      ),
    },
    async (req, reply) => {
      const { id } = req.params;
      const progress = async () => {
        const campaign = await deps.campaigns.get(id);
        const begun = await deps.store.attemptsBegunSince(id, deps.now() - DIAL_RATE_WINDOW_MS);
        return { ...campaign, dialRate: begun / (DIAL_RATE_WINDOW_MS / 1_000) };
      };
      // An unknown campaign is a 404 before the stream opens.
      let last = await progress();
      const events = openEventStream(req, reply);
      let lastJson = JSON.stringify(last);
      events.send('progress', last);
      if (ENDED_STATES.has(last.state)) return events.end();
      const timer = setInterval(() => {
        progress().then(
          (now) => {
            const json = JSON.stringify(now);
            if (json === lastJson) return;
            last = now;
            lastJson = json;
            events.send('progress', now);
            if (ENDED_STATES.has(now.state)) events.end();
          },
          (err: Error) => req.log.warn({ err: err.message, campaign: id }, 'campaign progress unreadable'),
        );
      }, deps.campaignEveryMs ?? 1_000);
      timer.unref();
      events.onClose(() => clearInterval(timer));
    },
  );
}
