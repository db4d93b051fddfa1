// What the parts of the Redis campaign store share: the client, the key layout below, and the
// compare-and-set loop every read-decide-write step on a contact goes through.
//
//   {c:<id>}:meta          the campaign JSON
//   {c:<id>}:seq           the last contact seq handed out
//   {c:<id>}:contacts      hash seq → contact JSON
//   {c:<id>}:phones        hash E.164 → seq (duplicates)
//   {c:<id>}:due           sorted set of waiting contacts by due time
//   {c:<id>}:leased        sorted set of leased contacts by lease end
//   {c:<id>}:st:<state>    sorted set of contacts in that state, by seq
//   {c:<id>}:outcomes      hash final outcome → contacts
//   {c:<id>}:vars          hash variable → callable contacts with a value
//   {c:<id>}:open          hash attempt id → open attempt JSON (its length is the calls in flight)
//   {c:<id>}:dials         the pace's state (pace.ts), JSON
//   {c:<id>}:starts        sorted set of attempt ids by start (the last ten minutes)
//   {c:<id>}:results       sorted set of finished attempt ids by end; {c:<id>}:failures the failed ones
//   {campaigns}:index      sorted set, member = 16-digit creation ms + id, for listing
//   {campaigns}:active     set of campaign ids a dialer may have work in (a hint: settleCampaign)
//   attempt-call:<callSid> `<campaign id> <attempt id>`, for a day
import type { Redis } from 'ioredis';
import { CONTACT_STATES, type ContactRecord, type ContactState } from '../campaign-records.js';
import { readContact } from '../campaign-transitions.js';

/** A compare-and-set lost this many times in a row means something is wrong; give up loudly. */
const MAX_CAS_TRIES = 20;

/** What a compare-and-set step answers when what it read changed before its write. */
export const STALE = 'stale';
type Stale = typeof STALE;

/** Runs a read-decide-write step until its write finds what it read still stored. */
export async function untilWon<T>(what: string, step: () => Promise<T | Stale>): Promise<T> {
  for (let tries = 0; tries < MAX_CAS_TRIES; tries++) {
    const result = await step();
    if (result !== STALE) return result;
  }
  throw new Error(`${what}: lost ${MAX_CAS_TRIES} races in a row`);
}

function campaignKeys(prefix: string, id: string) {
  const tag = `${prefix}{c:${id}}`;
  return {
    meta: `${tag}:meta`,
    seq: `${tag}:seq`,
    contacts: `${tag}:contacts`,
    phones: `${tag}:phones`,
    due: `${tag}:due`,
    leased: `${tag}:leased`,
    state: (state: ContactState) => `${tag}:st:${state}`,
    outcomes: `${tag}:outcomes`,
    vars: `${tag}:vars`,
    open: `${tag}:open`,
    dials: `${tag}:dials`,
    /** Left by the token bucket the pace once was; expired with the rest. */
    legacyPace: `${tag}:pace`,
    starts: `${tag}:starts`,
    results: `${tag}:results`,
    failures: `${tag}:failures`,
  };
}

type CampaignKeys = ReturnType<typeof campaignKeys>;

export interface CampaignContext {
  client: Redis;
  /** The keys of one campaign. */
  k(id: string): CampaignKeys;
  /** Every key of one campaign, so an ended one can expire whole. */
  allKeys(id: string): string[];
  /** `{campaigns}:index`, the listing order. */
  index: string;
  /** `{campaigns}:active`, the campaigns a dialer may have work in. */
  active: string;
  callKey(callSid: string): string;
  /** The contact's stored JSON, exactly as a compare-and-set script compares it. */
  rawContact(id: string, seq: number): Promise<string | null>;
  /** Reads the contact and lets `step` decide and write, if the contact is unchanged meanwhile. */
  casContact<T>(
    id: string,
    seq: number,
    step: (contact: ContactRecord, json: string) => Promise<T | Stale>,
  ): Promise<T | null>;
}

export function campaignContext(client: Redis, prefix: string): CampaignContext {
  const k = (id: string) => campaignKeys(prefix, id);
  const allKeys = (id: string) => {
    // Every key of the layout, whatever is added to it: the per-state sets by name.
    const { state, ...fixed } = k(id);
    return [...Object.values(fixed), ...CONTACT_STATES.map(state)];
  };
  const index = `${prefix}{campaigns}:index`;
  const active = `${prefix}{campaigns}:active`;
  const callKey = (callSid: string) => `${prefix}attempt-call:${callSid}`;

  const rawContact = (id: string, seq: number) => client.hget(k(id).contacts, String(seq));

  function casContact<T>(
    id: string,
    seq: number,
    step: (contact: ContactRecord, json: string) => Promise<T | Stale>,
  ): Promise<T | null> {
    return untilWon(`campaign ${id} contact ${seq}`, async () => {
      const json = await rawContact(id, seq);
      return json === null ? null : step(readContact(json), json);
    });
  }

  return { client, k, allKeys, index, active, callKey, rawContact, casContact };
}
