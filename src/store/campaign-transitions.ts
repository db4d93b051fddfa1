// What both campaign adapters and their callers agree on: the campaign's lifecycle table, how a
// contact record changes at each step, and the cursors (the pace is pace.ts). The adapters differ only in how they make each step atomic.
import { BadRequestError } from '../errors.js';
import {
  type AttemptSummary,
  type CampaignState,
  attemptId,
  CONTACT_STATES,
  type ContactRecord,
  type ContactState,
  FINAL_OUTCOMES,
  type NewContact,
  type OpenAttempt,
} from './campaign-records.js';
import type { CampaignPatch, Campaigns, ContactTally, FinishAttempt } from './campaign-store.js';
import { MAX_CURSOR_CHARS } from './call-record-query.js';

/**
 * Every change of a campaign's state, which states it may start from and where it leads: the
 * operator's four actions, the breaker's pause and the completion the dialer records once no contact
 * is left. Nothing moves a campaign except through this table (`moveCampaign`).
 */
export const CAMPAIGN_TRANSITIONS = Object.freeze({
  start: { from: ['draft'], to: 'running' },
  pause: { from: ['running'], to: 'paused' },
  resume: { from: ['paused'], to: 'running' },
  cancel: { from: ['draft', 'running', 'paused'], to: 'cancelled' },
  trip: { from: ['running'], to: 'paused' },
  complete: { from: ['running'], to: 'completed' },
} as const satisfies Record<string, { from: readonly CampaignState[]; to: CampaignState }>);
export type CampaignTransition = keyof typeof CAMPAIGN_TRANSITIONS;

/** Moves the campaign by `transition` if its state allows: the record after, or null. */
export function moveCampaign(
  store: Pick<Campaigns, 'transitionCampaign'>,
  id: string,
  transition: CampaignTransition,
  patch: CampaignPatch,
) {
  const { from, to } = CAMPAIGN_TRANSITIONS[transition];
  return store.transitionCampaign(id, from, to, patch);
}

/** States in which contacts may still be added: until the campaign ends. */
export const ACCEPTS_CONTACTS: readonly CampaignState[] = ['draft', 'running', 'paused'];

/** The note on each waiting contact a cancel closes. */
export const CANCELLED_NOTE = 'the campaign was cancelled';

export function newContactRecord(campaignId: string, seq: number, contact: NewContact, nowMs: number) {
  const record: ContactRecord = {
    ...contact,
    campaignId,
    seq,
    state: contact.invalid === null ? 'pending' : 'done',
    dueAtMs: nowMs,
    attempts: [],
    dials: 0,
    carrierErrors: 0,
    outcome: contact.invalid === null ? null : 'invalid',
    note: contact.invalid,
  };
  return record;
}

export const isWaiting = (state: ContactState) => state === 'pending' || state === 'retry';

/** The contact and its open attempt once an attempt begins. */
export function beginOnContact(
  contact: ContactRecord,
  input: { owner: string; from: string | null; nowMs: number },
): { contact: ContactRecord; attempt: OpenAttempt } {
  const dial = contact.dials + 1;
  const id = attemptId(contact.campaignId, contact.seq, dial);
  const summary: AttemptSummary = {
    id,
    number: contact.attempts.length + 1,
    from: input.from,
    callSid: null,
    startedAtMs: input.nowMs,
    endedAtMs: null,
    outcome: null,
    durationMs: null,
    answeredBy: null,
    summary: null,
    reason: null,
  };
  return {
    contact: { ...contact, state: 'dialing', dials: dial, attempts: [...contact.attempts, summary] },
    attempt: {
      id,
      campaignId: contact.campaignId,
      contactId: contact.seq,
      owner: input.owner,
      to: contact.phone,
      from: input.from,
      callSid: null,
      claimedAtMs: input.nowMs,
    },
  };
}

export function callSidOnContact(contact: ContactRecord, id: string, callSid: string): ContactRecord {
  return {
    ...contact,
    attempts: contact.attempts.map((a) => (a.id === id ? { ...a, callSid } : a)),
  };
}

export function finishOnContact(contact: ContactRecord, input: FinishAttempt): ContactRecord {
  const { result, next } = input;
  const attempts =
    result.kind === 'refunded'
      ? contact.attempts.filter((a) => a.id !== input.attemptId)
      : contact.attempts.map((a) =>
          a.id === input.attemptId
            ? {
                ...a,
                endedAtMs: input.nowMs,
                outcome: result.outcome,
                durationMs: result.details.durationMs ?? null,
                answeredBy: result.details.answeredBy ?? null,
                summary: result.details.summary ?? null,
                reason: result.details.reason ?? null,
              }
            : a,
        );
  const base = {
    ...contact,
    attempts,
    carrierErrors: contact.carrierErrors + (result.kind === 'refunded' ? 1 : 0),
  };
  if (next.state === 'done') {
    return { ...base, state: 'done', outcome: next.outcome, note: next.note ?? contact.note };
  }
  return { ...base, state: attempts.length === 0 ? 'pending' : 'retry', dueAtMs: next.dueAtMs };
}

export function closeOnContact(
  contact: ContactRecord,
  close: { outcome: 'dnc' | 'cancelled'; note: string | null },
): ContactRecord {
  return { ...contact, state: 'done', outcome: close.outcome, note: close.note };
}

/** A stored contact as read back: JSON from Lua turns an empty list into `{}`. */
export function readContact(json: string): ContactRecord {
  const contact = JSON.parse(json) as ContactRecord;
  if (!Array.isArray(contact.attempts)) contact.attempts = [];
  if (Array.isArray(contact.variables)) contact.variables = {};
  return contact;
}

export function emptyTally(): ContactTally {
  return {
    states: Object.fromEntries(CONTACT_STATES.map((s) => [s, 0])) as ContactTally['states'],
    outcomes: Object.fromEntries(FINAL_OUTCOMES.map((o) => [o, 0])) as ContactTally['outcomes'],
    variables: {},
    callable: 0,
  };
}

/** Cursors are the base64url of a short text the adapter wrote; anything else is refused. */
export function encodeCursor(text: string): string {
  return Buffer.from(text).toString('base64url');
}

export function decodeCursor(cursor: string, shape: RegExp): string {
  if (cursor.length > 0 && cursor.length <= MAX_CURSOR_CHARS && /^[A-Za-z0-9_-]+$/.test(cursor)) {
    const text = Buffer.from(cursor, 'base64url').toString('utf8');
    if (shape.test(text)) return text;
  }
  throw new BadRequestError('cursor is not one a previous page handed out');
}

export const CURSOR_SEQ = /^s\d{1,9}$/;
export const seqCursor = (seq: number) => encodeCursor(`s${seq}`);
export const seqFromCursor = (cursor: string) => Number(decodeCursor(cursor, CURSOR_SEQ).slice(1));
