// One campaign's share of a pass: lease a few due contacts (each to one dialer at a time); a contact
// outside its calling window waits for the next opening (it is not skipped); a number on the
// do-not-call list, checked right before the dial, ends as `dnc`; `beginAttempt` claims the attempt
// durably, under the cap and the pace, before the carrier is asked. A refusal (pace, cap) puts the
// rest back and says when to look again.
import type { CampaignRecord, ContactRecord, OpenAttempt } from '../store/campaign-records.js';
import type { DialerContext } from './dialer-context.js';
import { isWindowOpen, nextOpening } from './windows.js';

const DAY_MS = 24 * 3_600_000;
/**
 * The pace lets one dial through per slot (store/pace.ts), a few when catching up after a late
 * pass: a pass leases a few contacts to dial and one more to learn when the next slot opens, so it
 * leases little more than it can use.
 */
const LEASED_PER_PASS = 3;

export type Dispatch = (campaign: CampaignRecord, contact: ContactRecord, attempt: OpenAttempt) => void;

/** Dials what is due; returns when to look again (0: more may be due now). */
export async function dialDueContacts(
  ctx: DialerContext,
  campaign: CampaignRecord,
  dispatch: Dispatch,
): Promise<number> {
  const { store, clock, options } = ctx;
  const { spec } = campaign;
  const limit = Math.min(options.leaseBatch, LEASED_PER_PASS);
  const leased = await store.leaseDueContacts(campaign.id, {
    nowMs: clock.now(),
    limit,
    leaseMs: options.leaseMs,
  });
  for (const [i, contact] of leased.entries()) {
    const now = clock.now();
    if (!isWindowOpen(spec.schedule.windows, contact.timezone, now)) {
      const opening = nextOpening(spec.schedule.windows, contact.timezone, now) ?? now + DAY_MS;
      await store.releaseContact(campaign.id, contact.seq, opening);
      continue;
    }
    if (await store.getDoNotCall(contact.phone)) {
      const closed = await store.closeContact(campaign.id, contact.seq, {
        outcome: 'dnc',
        note: 'on the do-not-call list',
        nowMs: now,
      });
      if (closed) ctx.metrics.campaignDials.inc({ outcome: 'dnc' });
      continue;
    }
    const begun = await store.beginAttempt({
      campaignId: campaign.id,
      seq: contact.seq,
      owner: ctx.owner,
      from: ctx.campaigns.of(campaign).callerIds.pick(contact.country),
      // The instant of the claim itself, after the do-not-call lookup: the pace and the attempt's
      // start time are both this.
      nowMs: clock.now(),
      maxConcurrent: ctx.campaigns.cap(campaign),
      callsPerSecond: spec.pacing.callsPerSecond,
    });
    if (begun.ok) {
      dispatch(campaign, begun.contact, begun.attempt);
      continue;
    }
    if (begun.reason === 'not_waiting') continue;
    for (const rest of leased.slice(i)) await store.releaseContact(campaign.id, rest.seq, rest.dueAtMs);
    if (begun.reason === 'pace') return begun.waitMs;
    // At the cap a finishing call wakes the dialer; the poll is a safety net.
    return options.idlePollMs;
  }
  if (leased.length === limit) return 0;
  // Nothing more due: sleep until the next contact falls due (a window opens, a retry delay ends),
  // polling meanwhile for work another instance may have started.
  const nextDue = await store.nextDueAtMs(campaign.id);
  if (nextDue === null) return options.idlePollMs;
  return Math.min(options.idlePollMs, Math.max(0, nextDue - clock.now()));
}
