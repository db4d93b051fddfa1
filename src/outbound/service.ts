// Campaigns as operators drive them (the admin API and the CLI): create, add contacts, start, pause,
// resume, cancel, and read progress and results. The lifecycle is a table; every change is one
// compare-and-set in the store, so two operators (or two instances) never both win a transition.
import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { Logger } from 'pino';
import type { AgentProfile } from '../config/types.js';
import { BadRequestError, ConflictError, NotFoundError, UnavailableError } from '../errors.js';
import { MAX_CONTACTS_PER_CAMPAIGN } from '../store/campaign-store.js';
import {
  ACCEPTS_CONTACTS,
  CAMPAIGN_TRANSITIONS,
  type CampaignTransition,
  moveCampaign,
} from '../store/campaign-transitions.js';
import type { Store } from '../store/store.js';
import { campaignSpec } from './campaign-spec.js';
import type { DialerClock } from './clock.js';
import { contactsFromCsv, contactsFromJson, type RejectedRow } from './contacts-import.js';
import type { Dialer } from './dialer.js';
import { campaignProgress } from './progress.js';
import type { CampaignRecord, CampaignState, ContactState } from '../store/campaign-records.js';
import { resultsCsv } from './results-csv.js';
import { requiredVariables } from './template.js';
import { type CampaignView, campaignView, contactView } from './views.js';
import type { DialPolicy } from '../trust/dial-policy.js';
import type { FetchPolicy } from '../trust/fetch-policy.js';
import type { NewContact } from '../store/campaign-records.js';
import { STORE_BATCH, yieldToLoop } from './slices.js';

/** What an operator may do to a campaign: rows of the lifecycle table (store/campaign-transitions.ts). */
export type CampaignAction = Extract<CampaignTransition, 'start' | 'pause' | 'resume' | 'cancel'>;

/** Waiting contacts closed per store step when a campaign is cancelled. */
const CANCEL_BATCH = 500;

export interface CampaignServiceDeps {
  store: Store;
  profiles: Readonly<Record<string, AgentProfile>>;
  defaultProfile: string;
  carriers: readonly string[];
  /** Carriers among them with no answering-machine detection: a campaign with detection on is refused. */
  carriersWithoutMachineDetection?: readonly string[];
  logger: Logger;
  clock: DialerClock;
  /** null: no carrier can place calls here, so campaigns can be prepared but not started. */
  dialer: Dialer | null;
  /** Contacts and caller IDs it refuses are refused at once (docs/security.md). */
  dialPolicy: DialPolicy;
  /** A voicemail `audioUrl` at an address it refuses is refused at once (it is checked again when fetched). */
  fetchPolicy: FetchPolicy;
}

export type ContactsBody = { csv: string } | { json: unknown };

export class CampaignService {
  constructor(private readonly deps: CampaignServiceDeps) {}

  async create(body: unknown): Promise<CampaignView> {
    const spec = campaignSpec(body, {
      profiles: this.deps.profiles,
      defaultProfile: this.deps.defaultProfile,
      carriers: this.deps.carriers,
      carriersWithoutMachineDetection: this.deps.carriersWithoutMachineDetection ?? [],
    });
    for (const [i, from] of spec.from.entries()) this.deps.dialPolicy.assert(from, `from[${i}]`);
    const audioUrl = spec.amd.voicemail?.audioUrl;
    const refused = audioUrl === undefined ? null : this.deps.fetchPolicy.urlProblem(audioUrl);
    if (refused !== null) throw new BadRequestError(`amd.voicemail.audioUrl: ${refused}`);
    const consent = spec.recording?.consent;
    const consentUrl = consent && 'audioUrl' in consent ? consent.audioUrl : null;
    const consentRefused =
      consentUrl === null ? null : (this.deps.fetchPolicy?.urlProblem(consentUrl) ?? null);
    if (consentRefused !== null) throw new BadRequestError(`recording.consent.audioUrl: ${consentRefused}`);
    const record: CampaignRecord = {
      id: `cmp_${randomBytes(10).toString('hex')}`,
      spec,
      state: 'draft',
      createdAtMs: this.deps.clock.now(),
      startedAtMs: null,
      endedAtMs: null,
      pause: null,
      breakerSinceMs: 0,
    };
    await this.deps.store.createCampaign(record);
    this.deps.logger.info({ campaignId: record.id, name: spec.name }, 'campaign created');
    return this.view(record);
  }

  async get(id: string): Promise<CampaignView> {
    return this.view(await this.campaign(id));
  }

  async list(query: { limit: number; cursor?: string }) {
    const page = await this.deps.store.listCampaigns(query);
    return {
      campaigns: await Promise.all(page.campaigns.map((campaign) => this.view(campaign))),
      nextCursor: page.nextCursor,
    };
  }

  async addContacts(id: string, body: ContactsBody): Promise<{ added: number; rejected: RejectedRow[] }> {
    const campaign = await this.campaign(id);
    if (!ACCEPTS_CONTACTS.includes(campaign.state)) {
      throw new ConflictError(`campaign ${id} is ${campaign.state}: contacts can no longer be added`);
    }
    const context = {
      campaignTimezone: campaign.spec.schedule.timezone,
      required: requiredVariables(campaign.spec, this.deps.profiles[campaign.spec.profile]),
      dialPolicy: this.deps.dialPolicy,
    };
    const parsed =
      'csv' in body ? await contactsFromCsv(body.csv, context) : await contactsFromJson(body.json, context);
    const result = await this.storeInBatches(id, parsed.contacts);
    if (!result.ok) {
      if (result.reason === 'not_found') throw new NotFoundError(`no campaign ${id}`);
      throw new ConflictError(`campaign ${id} has ended: contacts can no longer be added`);
    }
    const rejected = [...parsed.rejected];
    const left = new Set([...result.duplicates, ...result.refused]);
    for (const i of result.duplicates) {
      rejected.push({ row: parsed.contacts[i]!.row, reason: 'already in the campaign' });
    }
    const why =
      result.refusedReason === 'ended'
        ? 'the campaign ended while contacts were being added'
        : `the campaign is full (${MAX_CONTACTS_PER_CAMPAIGN} contacts)`;
    for (const i of result.refused) rejected.push({ row: parsed.contacts[i]!.row, reason: why });
    const added = parsed.contacts.filter((c, i) => c.invalid === null && !left.has(i)).length;
    rejected.sort((a, b) => a.row - b.row);
    this.deps.logger.info({ campaignId: id, added, rejected: rejected.length }, 'contacts added');
    if (campaign.state === 'running') this.deps.dialer?.wake();
    return { added, rejected };
  }

  /**
   * The contacts stored a batch at a time, the event loop given back between batches (one big
   * transaction would hold every live call for its whole length); indexes are the upload's.
   */
  private async storeInBatches(id: string, contacts: readonly NewContact[]) {
    const duplicates: number[] = [];
    const refused: number[] = [];
    let refusedReason: 'full' | 'ended' | null = null;
    let start = 0;
    do {
      if (start > 0) await yieldToLoop();
      const batch = contacts.slice(start, start + STORE_BATCH);
      const result = await this.deps.store.addContacts(id, batch, this.deps.clock.now());
      if (!result.ok) {
        if (start === 0) return result;
        // The campaign ended between two batches: the rest of the upload is refused as such.
        for (let i = start; i < contacts.length; i++) refused.push(i);
        refusedReason = 'ended';
        break;
      }
      duplicates.push(...result.duplicates.map((i) => i + start));
      refused.push(...result.refused.map((i) => i + start));
      refusedReason = refusedReason ?? result.refusedReason;
      start += STORE_BATCH;
    } while (start < contacts.length);
    return { ok: true as const, duplicates, refused, refusedReason };
  }

  async contacts(id: string, query: { state?: ContactState; limit: number; cursor?: string }) {
    await this.campaign(id);
    const page = await this.deps.store.listContacts(id, query);
    return { contacts: page.contacts.map(contactView), nextCursor: page.nextCursor };
  }

  async results(id: string): Promise<Readable> {
    await this.campaign(id);
    return resultsCsv(this.deps.store, id);
  }

  async act(id: string, action: CampaignAction): Promise<CampaignView> {
    const campaign = await this.campaign(id);
    const { from, to } = CAMPAIGN_TRANSITIONS[action];
    if (!(from as readonly CampaignState[]).includes(campaign.state)) {
      throw new ConflictError(
        `campaign ${id} is ${campaign.state}; ${action} needs a campaign that is ${from.join(' or ')}`,
      );
    }
    if (action === 'start' || action === 'resume') await this.checkStartable(campaign);
    const now = this.deps.clock.now();
    const patch =
      action === 'start'
        ? { startedAtMs: now, breakerSinceMs: now }
        : action === 'pause'
          ? { pause: { by: 'operator' as const, message: 'paused by an operator', atMs: now } }
          : action === 'resume'
            ? { pause: null, breakerSinceMs: now }
            : { endedAtMs: now, pause: null };
    const next = await moveCampaign(this.deps.store, id, action, patch);
    if (!next) {
      const current = await this.campaign(id);
      throw new ConflictError(
        `campaign ${id} is ${current.state}; ${action} needs a campaign that is ${from.join(' or ')}`,
      );
    }
    this.deps.logger.info({ campaignId: id, action, state: next.state }, 'campaign state changed');
    if (action === 'cancel') await this.closeCancelled(id);
    else if (to === 'running') this.deps.dialer?.wake();
    return this.view(next);
  }

  /** A cancelled campaign's waiting contacts end as `cancelled`; its live calls are hung up. */
  private async closeCancelled(id: string): Promise<void> {
    while ((await this.deps.store.cancelWaitingContacts(id, CANCEL_BATCH, this.deps.clock.now())) > 0) {
      // Until none is left waiting.
    }
    const asked = (await this.deps.dialer?.hangUpAll(id)) ?? 0;
    if (asked > 0)
      this.deps.logger.info(
        { campaignId: id, calls: asked },
        'asked the carrier to hang up the campaign calls',
      );
  }

  /** The checks a start (and a resume) repeats: a dialer, the profile, and every placeholder filled. */
  private async checkStartable(campaign: CampaignRecord): Promise<void> {
    if (!this.deps.dialer) {
      throw new UnavailableError(
        'no carrier can place outbound calls on this server, so campaigns cannot run',
      );
    }
    const profile = this.deps.profiles[campaign.spec.profile];
    if (!profile) {
      throw new ConflictError(
        `campaign ${campaign.id} uses profile "${campaign.spec.profile}", which no longer exists`,
      );
    }
    const tally = await this.deps.store.contactTally(campaign.id);
    if (campaign.state === 'draft' && tally.callable === 0) {
      throw new ConflictError(`campaign ${campaign.id} has no contacts to call; add contacts first`);
    }
    const missing: string[] = [];
    for (const [name, where] of requiredVariables(campaign.spec, profile)) {
      const without = tally.callable - (tally.variables[name] ?? 0);
      if (without > 0)
        missing.push(
          `${without} contacts have no value for {{${name}}} (used in the ${where.join(' and ')})`,
        );
    }
    if (missing.length > 0)
      throw new ConflictError(`campaign ${campaign.id} cannot start: ${missing.join('; ')}`);
  }

  private async campaign(id: string): Promise<CampaignRecord> {
    if (!CAMPAIGN_ID.test(id)) throw new NotFoundError(`no campaign ${JSON.stringify(id.slice(0, 60))}`);
    const campaign = await this.deps.store.getCampaign(id);
    if (!campaign) throw new NotFoundError(`no campaign ${id}`);
    return campaign;
  }

  private async view(campaign: CampaignRecord): Promise<CampaignView> {
    return campaignView(campaign, await campaignProgress(this.deps.store, campaign, this.deps.clock.now()));
  }
}

export const CAMPAIGN_ID = /^cmp_[a-z0-9]{1,40}$/;

/** Throws a 400 for a contacts body that is neither CSV nor JSON. */
export function contactsBody(contentType: string | undefined, body: unknown): ContactsBody {
  if (typeof body === 'string' && contentType?.startsWith('text/csv')) return { csv: body };
  if (contentType?.startsWith('application/json')) return { json: body };
  throw new BadRequestError('contacts must be sent as text/csv or a JSON array (application/json)');
}
