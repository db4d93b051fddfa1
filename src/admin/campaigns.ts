// Campaigns, for operators and the CLI. Mounted by the app inside the `/v1` admin scope, which
// checks each route's declared role: viewers read, operators change (audited).
//   POST /campaigns                          → 201 the campaign (draft)
//   GET  /campaigns[?limit=&cursor=]         → 200 {"campaigns": [...], "nextCursor": …}, newest first
//   GET  /campaigns/:id                      → 200 the campaign with its progress
//   POST /campaigns/:id/contacts             → 200 {"added": n, "rejected": [{"row", "reason"}]}
//        text/csv (a header row, then one contact per row) or a JSON array of objects
//   POST /campaigns/:id/start|pause|resume|cancel → 200 the campaign; 409 from a state that forbids it
//   GET  /campaigns/:id/contacts[?state=&limit=&cursor=] → 200 {"contacts": [...], "nextCursor": …}
//   GET  /campaigns/:id/results.csv          → 200 text/csv, one row per contact
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { PAGE_LIMITS } from '../api/common.js';
import { type CampaignAction, type CampaignService, contactsBody } from '../outbound/service.js';
import { routeSchema, typed } from './schemas.js';

export interface CampaignAdminDeps {
  campaigns: CampaignService;
}

/** A contacts upload of the largest size accepted (50,000 rows) fits with room to spare. */
export const UPLOAD_BODY_LIMIT_BYTES = 16 * 1024 * 1024;
/**
 * How long an upload received whole may take to be read and stored, the connection silent meanwhile:
 * it is read in slices that let calls go on (src/outbound/slices.ts), so on a busy machine it may
 * outlast the server's 10 s idle limit, which guards against clients that send nothing.
 */
export const UPLOAD_PROCESSING_TIMEOUT_MS = 120_000;

/** A preHandler: runs once the body is in and the caller authenticated, so only real uploads get it. */
export function allowLongProcessing(request: FastifyRequest, _reply: unknown, done: () => void): void {
  request.raw.socket.setTimeout(UPLOAD_PROCESSING_TIMEOUT_MS);
  done();
}

const ACTIONS: readonly CampaignAction[] = ['start', 'pause', 'resume', 'cancel'];

/** text/csv bodies arrive as text; registered once per scope, whichever route file comes first. */
export function acceptCsv(scope: FastifyInstance): void {
  if (scope.hasContentTypeParser('text/csv')) return;
  scope.addContentTypeParser('text/csv', { parseAs: 'string' }, (_req, body, done) => done(null, body));
}

export function registerCampaignAdminRoutes(scope: FastifyInstance, deps: CampaignAdminDeps): void {
  const { campaigns } = deps;
  acceptCsv(scope);

  const api = typed(scope);
  api.post(
    '/campaigns',
    {
      config: { role: 'operator' },
      schema: routeSchema('/v1/campaigns', 'post', 'Create a campaign (draft)'),
    },
    async (request, reply) => {
      const campaign = await campaigns.create(request.body);
      await request.audit('campaign.create', campaign.id, { name: campaign.name });
      return reply.code(201).send(campaign);
    },
  );

  api.get(
    '/campaigns',
    { config: { role: 'viewer' }, schema: routeSchema('/v1/campaigns', 'get', 'Campaigns, newest first') },
    async (request) => {
      const { limit, cursor } = request.query;
      return campaigns.list({
        limit: limit ?? PAGE_LIMITS.campaigns.fallback,
        ...(cursor ? { cursor } : {}),
      });
    },
  );

  api.get(
    '/campaigns/:id',
    {
      config: { role: 'viewer' },
      schema: routeSchema('/v1/campaigns/{id}', 'get', 'A campaign with its progress', 404),
    },
    async (request) => campaigns.get(request.params.id),
  );

  api.post(
    '/campaigns/:id/contacts',
    {
      bodyLimit: UPLOAD_BODY_LIMIT_BYTES,
      preHandler: allowLongProcessing,
      config: { role: 'operator' },
      schema: routeSchema(
        '/v1/campaigns/{id}/contacts',
        'post',
        'Upload contacts: text/csv or a JSON array',
        404,
        409,
        413,
      ),
    },
    async (request) => {
      const added = await campaigns.addContacts(
        request.params.id,
        contactsBody(request.headers['content-type'], request.body),
      );
      await request.audit('campaign.contacts', request.params.id, {
        added: added.added,
        rejected: added.rejected.length,
      });
      return added;
    },
  );

  for (const action of ACTIONS) {
    api.post(
      `/campaigns/:id/${action}`,
      {
        config: { role: 'operator' },
        schema: routeSchema(
          `/v1/campaigns/{id}/${action}`,
          'post',
          `${action[0]!.toUpperCase()}${action.slice(1)} the campaign`,
          404,
          409,
        ),
      },
      async (request) => {
        const campaign = await campaigns.act(request.params.id, action);
        await request.audit(`campaign.${action}`, request.params.id);
        return campaign;
      },
    );
  }

  api.get(
    '/campaigns/:id/contacts',
    {
      config: { role: 'viewer' },
      schema: routeSchema('/v1/campaigns/{id}/contacts', 'get', "A campaign's contacts", 404),
    },
    async (request) => {
      const { state, limit, cursor } = request.query;
      return campaigns.contacts(request.params.id, {
        limit: limit ?? PAGE_LIMITS.contacts.fallback,
        ...(state ? { state } : {}),
        ...(cursor ? { cursor } : {}),
      });
    },
  );

  api.get(
    '/campaigns/:id/results.csv',
    {
      config: { role: 'viewer' },
      schema: routeSchema('/v1/campaigns/{id}/results.csv', 'get', 'The results, one row per contact', 404),
    },
    async (request, reply) => {
      const csv = await campaigns.results(request.params.id);
      await request.audit('campaign.results', request.params.id);
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="results-${request.params.id}.csv"`)
        .send(csv);
    },
  );
}
