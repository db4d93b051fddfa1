// A call in flight when its campaign is cancelled is recorded as what it was: `cancelled` if it
// still rang (whatever status the carrier gives a call withdrawn before the answer), its own outcome
// if it was answered, with the cancel named as the reason; a call that failed before the cancel
// stays `failed`. And while calls ring, the estimate of the time left is never "0s".
import { afterEach, describe, expect, it } from 'vitest';
import { CANCELLED_IN_FLIGHT } from '../../src/outbound/cancel-outcome.js';
import { campaignProgress } from '../../src/outbound/progress.js';
import { csvOf, dialerRig, type Rig } from './rig.js';

const SECOND = 1_000;

let rig: Rig | null = null;
afterEach(async () => {
  await rig?.close();
  rig = null;
});

/** The carrier reports each hang-up the cancel asks for as `status` (some say failed for a withdrawn call). */
function hangupsReportedAs(current: Rig, status: 'failed' | 'completed', durationMs = 0): void {
  current.originator.hangup = async (callSid) => {
    current.originator.hangups.push(callSid);
    await current.dialers[0]!.attemptFinished({ callSid }, status, {
      durationMs,
      reason: `carrier status ${status}`,
    });
  };
}

describe('a call in flight at cancel', () => {
  it('is cancelled, not failed, when the carrier reports the withdrawn ringing call as failed', async () => {
    rig = await dialerRig();
    hangupsReportedAs(rig, 'failed');
    // 80-89 ring out for 30 s: still ringing at the cancel.
    const id = await rig.campaign({}, csvOf(['+12125550183']));
    await rig.run(3 * SECOND);
    expect(rig.originator.liveCount).toBe(1);
    await rig.service.act(id, 'cancel');
    await rig.run(SECOND);
    const contact = await rig.store.getContact(id, 1);
    expect(contact).toMatchObject({ state: 'done', outcome: 'cancelled' });
    expect(contact?.attempts[0]).toMatchObject({
      outcome: 'cancelled',
      reason: `${CANCELLED_IN_FLIGHT} (carrier status failed)`,
    });
  });

  it('keeps the outcome of an answered call the cancel hung up, and says the cancel ended it', async () => {
    rig = await dialerRig();
    hangupsReportedAs(rig, 'completed', 4_000);
    const id = await rig.campaign({}, csvOf(['+12125550100']));
    await rig.run(3 * SECOND);
    await rig.service.act(id, 'cancel');
    await rig.run(SECOND);
    const contact = await rig.store.getContact(id, 1);
    expect(contact).toMatchObject({ state: 'done', outcome: 'completed' });
    expect(contact?.attempts[0]?.reason).toBe(`${CANCELLED_IN_FLIGHT}: hung up (carrier status completed)`);
  });

  it('leaves a call that failed before the cancel as failed', async () => {
    rig = await dialerRig();
    // 90-99: the carrier cannot complete the call, before any cancel.
    const id = await rig.campaign({}, csvOf(['+12125550193', '+12125550183']));
    await rig.run(10 * SECOND);
    expect((await rig.store.getContact(id, 1))?.outcome).toBe('failed');
    await rig.service.act(id, 'cancel');
    await rig.run(SECOND);
    expect(await rig.store.getContact(id, 1)).toMatchObject({ state: 'done', outcome: 'failed' });
    expect(await rig.store.getContact(id, 2)).toMatchObject({ state: 'done', outcome: 'cancelled' });
  });
});

describe('the estimate of the time left', () => {
  it('counts the calls still ringing when no contact waits', async () => {
    rig = await dialerRig();
    const id = await rig.campaign(
      { pacing: { callsPerSecond: 5, maxConcurrent: 5 } },
      csvOf(['+12125550183']),
    );
    await rig.run(10 * SECOND);
    const campaign = (await rig.store.getCampaign(id))!;
    const progress = await campaignProgress(rig.store, campaign, rig.clock.now());
    expect(progress.contacts.pending).toBe(0);
    expect(progress.inFlight).toBe(1);
    // The call has rung for about 10 s: at least as long again, not "0s left".
    expect(progress.etaSeconds).toBeGreaterThanOrEqual(9);
  });

  it('is zero when nothing waits and no call is up', async () => {
    rig = await dialerRig();
    const id = await rig.campaign({}, csvOf(['+12125550193']), { start: true });
    await rig.run(60 * SECOND);
    const campaign = (await rig.store.getCampaign(id))!;
    const progress = await campaignProgress(rig.store, campaign, rig.clock.now());
    expect(progress.inFlight).toBe(0);
    expect(progress.etaSeconds === null || progress.etaSeconds === 0).toBe(true);
  });
});
