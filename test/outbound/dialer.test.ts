// The dialer against a fake carrier on a fake clock: pace, cap, calling windows in local time,
// retries, the do-not-call list, the breaker, cancel, carrier errors and agent 429s.
import { afterEach, describe, expect, it } from 'vitest';
import type { CallScript } from './fake-originator.js';
import { planScript } from './fake-originator.js';
import { csvOf, dialerRig, personNumbers, type Rig } from './rig.js';

const SECOND = 1_000;
const MINUTE = 60 * SECOND;

let rig: Rig | null = null;
afterEach(async () => {
  await rig?.close();
  rig = null;
});

const scripted =
  (byNumber: Record<string, CallScript[]>) =>
  (request: Parameters<typeof planScript>[0], attempt: number): CallScript =>
    byNumber[request.to]?.[attempt - 1] ?? planScript(request, attempt);

describe('pace and cap', () => {
  it('holds the pace set within 10% over a simulated minute', async () => {
    // The pace is calls begun per second, evenly spaced, shared by every instance (store/pace.ts).
    rig = await dialerRig();
    const start = rig.clock.now();
    await rig.campaign({ pacing: { callsPerSecond: 2, maxConcurrent: 100 } }, csvOf(personNumbers(400)));
    await rig.run(MINUTE);
    const inMinute = rig.originator.dials.filter((d) => d.atMs < start + MINUTE).length;
    expect(inMinute).toBeGreaterThanOrEqual(108);
    expect(inMinute).toBeLessThanOrEqual(132);
    // No sliding second holds more than the pace: the dial two places back began a second before.
    const times = rig.originator.dials.map((d) => d.atMs);
    for (let i = 2; i < times.length; i++) expect(times[i]! - times[i - 2]!).toBeGreaterThanOrEqual(SECOND);
  });

  it('never has more calls in flight than the cap', async () => {
    // The cap holds in the store: an attempt begins only while fewer than maxConcurrent are open.
    rig = await dialerRig();
    const id = await rig.campaign(
      { pacing: { callsPerSecond: 10, maxConcurrent: 5 } },
      csvOf(personNumbers(60)),
    );
    let maxOpen = 0;
    for (let s = 0; s < 150; s++) {
      await rig.run(SECOND);
      maxOpen = Math.max(maxOpen, (await rig.store.openAttempts(id)).length);
    }
    expect(rig.originator.maxLive).toBe(5);
    expect(maxOpen).toBe(5);
    // 23 s per call, 5 at a time: about 5 calls every 23 s.
    expect(rig.originator.dials.length).toBeGreaterThanOrEqual(30);
  });
});

describe('calling windows in the contact time zone', () => {
  it('dials no one while the window is closed and starts when it opens, across midnight', async () => {
    // 23:30 in Tokyo (14:30 UTC): the 09:00-17:00 window opens nine and a half hours later, at 00:00 UTC.
    rig = await dialerRig({ startMs: Date.UTC(2025, 0, 6, 14, 30), options: { idlePollMs: 10 * MINUTE } });
    await rig.campaign(
      {
        pacing: { callsPerSecond: 2, maxConcurrent: 10 },
        schedule: {
          timezone: 'Europe/London',
          windows: [
            { days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], start: '09:00', end: '17:00' },
          ],
        },
      },
      // One zone given, one derived from a Japanese number (Japan has one zone).
      [{ phone: '+12125550100', timezone: 'Asia/Tokyo' }, { phone: '+81312345600' }],
    );
    await rig.runTo(Date.UTC(2025, 0, 6, 23, 59, 59));
    expect(rig.originator.dials).toEqual([]);
    await rig.runTo(Date.UTC(2025, 0, 7, 0, 0, 5));
    expect(rig.originator.dials.map((d) => [d.to, d.atMs])).toEqual([
      ['+12125550100', Date.UTC(2025, 0, 7, 0, 0, 0)],
      // At 2 calls/s the second dial takes the next slot of the pace, half a second on.
      ['+81312345600', Date.UTC(2025, 0, 7, 0, 0, 0, 500)],
    ]);
  });

  it('opens a window at the local hour across a spring-forward change', async () => {
    // New York moves from UTC-5 to UTC-4 at 02:00 on 9 March 2025: 08:00 that Sunday is 12:00 UTC, not 13:00.
    // Saturday 22:00 EST. The dialer sleeps until the next contact falls due, polling every 10 minutes.
    rig = await dialerRig({ startMs: Date.UTC(2025, 2, 9, 3, 0), options: { idlePollMs: 10 * MINUTE } });
    await rig.campaign(
      { schedule: { windows: [{ days: ['sun'], start: '08:00', end: '10:00' }] } },
      csvOf(['+12125550100']), // 212: New York, from the area code
    );
    await rig.runTo(Date.UTC(2025, 2, 9, 11, 59, 59));
    expect(rig.originator.dials).toEqual([]);
    await rig.runTo(Date.UTC(2025, 2, 9, 12, 0, 1));
    expect(rig.originator.dials.map((d) => d.atMs)).toEqual([Date.UTC(2025, 2, 9, 12, 0, 0)]);
  });

  it('opens a window at the local hour across a fall-back change, and waits for the next day once closed', async () => {
    // Los Angeles moves from UTC-7 to UTC-8 at 02:00 on 2 November 2025: 08:00 is 16:00 UTC.
    rig = await dialerRig({ startMs: Date.UTC(2025, 10, 2, 6, 0), options: { idlePollMs: 10 * MINUTE } }); // Saturday 23:00 PDT
    await rig.campaign(
      {
        pacing: { callsPerSecond: 1, maxConcurrent: 1 },
        schedule: { windows: [{ days: ['sun', 'mon'], start: '08:00', end: '08:01' }] },
      },
      csvOf(['+14155550100', '+14155550101', '+14155550102', '+14155550103', '+14155550104']),
    );
    await rig.runTo(Date.UTC(2025, 10, 2, 15, 59, 59));
    expect(rig.originator.dials).toEqual([]);
    // One minute of window, calls of 23 s one at a time: three calls on Sunday, the rest on Monday.
    await rig.runTo(Date.UTC(2025, 10, 3, 17, 0));
    const atMs = rig.originator.dials.map((d) => d.atMs);
    expect(atMs[0]).toBe(Date.UTC(2025, 10, 2, 16, 0, 0));
    const sunday = atMs.filter((t) => t < Date.UTC(2025, 10, 3));
    expect(sunday.every((t) => t < Date.UTC(2025, 10, 2, 16, 1))).toBe(true);
    const monday = atMs.filter((t) => t >= Date.UTC(2025, 10, 3));
    expect(monday[0]).toBe(Date.UTC(2025, 10, 3, 16, 0, 0));
    expect(sunday.length + monday.length).toBe(5);
  });
});

describe('retries', () => {
  it('spends one attempt budget per contact whatever the outcomes: busy, no answer, busy with a budget of 2 is two attempts', async () => {
    // maxAttempts counts every attempt of a contact, not attempts per outcome.
    const number = '+12125550100';
    rig = await dialerRig({
      script: scripted({
        [number]: [
          { outcome: 'busy', afterMs: SECOND },
          { outcome: 'no_answer', afterMs: 30 * SECOND },
          { outcome: 'busy', afterMs: SECOND },
        ],
      }),
    });
    const id = await rig.campaign(
      { retry: { maxAttempts: 2, delaySeconds: 60, on: ['busy', 'no_answer'] } },
      csvOf([number]),
    );
    await rig.run(30 * MINUTE);
    const dials = rig.originator.dialsTo(number);
    expect(dials).toHaveLength(2);
    expect(dials[1]!.atMs - dials[0]!.atMs).toBeGreaterThanOrEqual(61 * SECOND);
    const contact = await rig.store.getContact(id, 1);
    expect(contact).toMatchObject({ state: 'done', outcome: 'no_answer' });
    expect(contact?.attempts.map((a) => a.outcome)).toEqual(['busy', 'no_answer']);
    expect((await rig.store.getCampaign(id))?.state).toBe('completed');
  });

  it('does not retry outcomes the campaign does not list, nor a completed call', async () => {
    rig = await dialerRig();
    // 75: busy; 00: a person. Retry only on no answer.
    const id = await rig.campaign(
      { retry: { maxAttempts: 3, delaySeconds: 10, on: ['no_answer'] } },
      csvOf(['+12125550175', '+12125550100']),
    );
    await rig.run(10 * MINUTE);
    expect(rig.originator.dials).toHaveLength(2);
    expect((await rig.store.getContact(id, 1))?.outcome).toBe('busy');
    expect((await rig.store.getContact(id, 2))?.outcome).toBe('completed');
  });
});

describe('the do-not-call list', () => {
  it('stops a dial to a number listed after the campaign started', async () => {
    // The list is read right before each dial, not when the campaign starts.
    rig = await dialerRig();
    const numbers = personNumbers(10);
    const id = await rig.campaign({ pacing: { callsPerSecond: 1, maxConcurrent: 10 } }, csvOf(numbers));
    await rig.run(3 * SECOND);
    expect(rig.originator.dials.length).toBeGreaterThan(0);
    expect(rig.originator.dialsTo(numbers[8]!)).toHaveLength(0);
    await rig.store.addDoNotCall([numbers[8]!], rig.clock.now());
    await rig.run(5 * MINUTE);
    expect(rig.originator.dialsTo(numbers[8]!)).toHaveLength(0);
    expect(rig.originator.dials).toHaveLength(9);
    expect(await rig.store.getContact(id, 9)).toMatchObject({ state: 'done', outcome: 'dnc', attempts: [] });
    const dnc = await rig.metrics.campaignDials.get();
    expect(dnc.values.find((v) => v.labels.outcome === 'dnc')?.value).toBe(1);
    expect((await rig.store.getCampaign(id))?.state).toBe('completed');
  });
});

describe('the circuit breaker', () => {
  it('pauses the campaign after the failure share, says why, and dials again once resumed', async () => {
    // 90-99 fail at the carrier; the rest are people. Five failures of the first five calls trip it.
    rig = await dialerRig();
    const failing = [
      '+12125550190',
      '+12125550191',
      '+12125550192',
      '+12125550193',
      '+12125550194',
      '+12125550195',
    ];
    const id = await rig.campaign(
      {
        pacing: { callsPerSecond: 1, maxConcurrent: 10 },
        breaker: { failureShare: 0.5, windowSeconds: 120, minCalls: 5 },
      },
      csvOf([...failing, ...personNumbers(10)]),
    );
    await rig.run(20 * SECOND);
    const campaign = await rig.store.getCampaign(id);
    expect(campaign?.state).toBe('paused');
    expect(campaign?.pause).toMatchObject({ by: 'breaker' });
    expect(campaign?.pause?.message).toMatch(/^5 of the last 5 calls failed within 120 s, more than 50%/);
    expect(rig.events.map((e) => [e.name, e.campaign.id])).toEqual([['campaign.paused', id]]);
    const dialsWhenPaused = rig.originator.dials.length;
    await rig.run(5 * MINUTE);
    expect(rig.originator.dials.length).toBe(dialsWhenPaused);

    await rig.service.act(id, 'resume');
    await rig.run(10 * MINUTE);
    expect((await rig.store.getCampaign(id))?.state).toBe('completed');
    expect(rig.originator.dials).toHaveLength(16);
    expect(rig.events.map((e) => e.name)).toEqual(['campaign.paused', 'campaign.completed']);
    expect((await rig.metrics.campaignBreakerTrips.get()).values[0]?.value).toBe(1);
  });

  it('does not count busy and no answer as failures', async () => {
    rig = await dialerRig();
    // 70-79 busy, 80-81 no answer.
    const numbers = Array.from({ length: 12 }, (_, i) => `+12125550${170 + i}`);
    const id = await rig.campaign(
      {
        pacing: { callsPerSecond: 2, maxConcurrent: 20 },
        breaker: { failureShare: 0.1, windowSeconds: 60, minCalls: 3 },
      },
      csvOf(numbers),
    );
    await rig.run(5 * MINUTE);
    expect((await rig.store.getCampaign(id))?.state).toBe('completed');
    expect(rig.events.map((e) => e.name)).toEqual(['campaign.completed']);
  });
});

describe('cancel', () => {
  it('hangs up the live calls, closes the waiting contacts and dials no more', async () => {
    rig = await dialerRig();
    const id = await rig.campaign(
      { pacing: { callsPerSecond: 2, maxConcurrent: 10 } },
      csvOf(personNumbers(30)),
    );
    await rig.run(3 * SECOND);
    const live = rig.originator.dials.map((d) => d.callSid);
    expect(rig.originator.liveCount).toBe(live.length);
    expect(live.length).toBeGreaterThanOrEqual(4);
    const view = await rig.service.act(id, 'cancel');
    expect(view.state).toBe('cancelled');
    expect(rig.originator.hangups.sort()).toEqual(live.sort());
    await rig.run(5 * MINUTE);
    expect(rig.originator.dials).toHaveLength(live.length);
    expect(rig.originator.liveCount).toBe(0);
    const tally = await rig.store.contactTally(id);
    expect(tally.states).toMatchObject({ pending: 0, retry: 0, dialing: 0, done: 30 });
    expect(tally.outcomes.cancelled).toBe(30);
    expect(await rig.store.openAttempts(id)).toEqual([]);
  });
});

describe('cancel while the carrier is placing a call', () => {
  it('hangs up the call as soon as the carrier names it', async () => {
    // The carrier takes 5 s to accept each request; the campaign is cancelled meanwhile.
    rig = await dialerRig();
    const originate = rig.originator.originate.bind(rig.originator);
    rig.originator.originate = (request) =>
      new Promise((resolve, reject) => {
        rig!.clock.setTimeout(() => originate(request).then(resolve, reject), 5 * SECOND);
      });
    const id = await rig.campaign({}, csvOf(['+12125550100']));
    await rig.run(SECOND);
    await rig.service.act(id, 'cancel');
    expect(rig.originator.hangups).toEqual([]);
    await rig.run(10 * SECOND);
    expect(rig.originator.hangups).toEqual([rig.originator.dials[0]!.callSid]);
    expect(await rig.store.getContact(id, 1)).toMatchObject({ state: 'done', outcome: 'cancelled' });
  });
});

describe('carrier API errors', () => {
  it('waits and dials again without spending an attempt when the carrier may accept later', async () => {
    const number = '+12125550100';
    rig = await dialerRig({
      script: scripted({
        [number]: [{ error: { retryable: true, status: 503 } }, { error: { retryable: true, status: 429 } }],
      }),
      options: { carrierRetryDelayMs: 10 * SECOND },
    });
    const id = await rig.campaign({ retry: { maxAttempts: 1, delaySeconds: 60, on: [] } }, csvOf([number]));
    await rig.run(5 * MINUTE);
    const dials = rig.originator.dialsTo(number);
    expect(dials).toHaveLength(3);
    expect(dials[1]!.atMs - dials[0]!.atMs).toBe(10 * SECOND);
    expect(dials[2]!.atMs - dials[1]!.atMs).toBe(20 * SECOND);
    expect(await rig.store.getContact(id, 1)).toMatchObject({ outcome: 'completed', carrierErrors: 2 });
    expect((await rig.store.getContact(id, 1))?.attempts).toHaveLength(1);
    const errors = await rig.metrics.campaignCarrierErrors.get();
    expect(errors.values.find((v) => v.labels.kind === 'retry_later')?.value).toBe(2);
  });

  it('fails the attempt when the carrier refuses for good', async () => {
    const number = '+12125550100';
    rig = await dialerRig({ script: scripted({ [number]: [{ error: { retryable: false, status: 400 } }] }) });
    const id = await rig.campaign({}, csvOf([number]));
    await rig.run(MINUTE);
    const contact = await rig.store.getContact(id, 1);
    expect(contact).toMatchObject({ state: 'done', outcome: 'failed' });
    expect(contact?.attempts[0]?.reason).toBe('carrier error CALLBRIDGE_CARRIER_API');
  });

  it('never redials an attempt whose request got no answer: it waits for a callback, then closes it as lost', async () => {
    // The carrier may have placed a call it never confirmed; a second call could ring the same person twice.
    const number = '+12125550100';
    rig = await dialerRig({
      script: scripted({ [number]: [{ error: { retryable: true } }] }),
      options: { lostDispatchGraceMs: 5 * MINUTE },
    });
    const id = await rig.campaign(
      { retry: { maxAttempts: 3, delaySeconds: 10, on: ['failed'] } },
      csvOf([number]),
    );
    await rig.run(4 * MINUTE);
    expect(await rig.store.openAttempts(id)).toHaveLength(1);
    await rig.run(2 * MINUTE);
    expect(rig.originator.dialsTo(number)).toHaveLength(1);
    const contact = await rig.store.getContact(id, 1);
    expect(contact).toMatchObject({ state: 'done', outcome: 'failed' });
    expect(contact?.attempts[0]?.reason).toBe('lost_before_dispatch');
    expect(contact?.note).toMatch(/^not redialed/);
  });

  /** A campaign of one contact whose request to the carrier got no answer: its attempt, open with no call id. */
  const unansweredAttempt = async () => {
    const number = '+12125550100';
    rig = await dialerRig({
      script: scripted({ [number]: ['no_reply'] }),
      options: { lostDispatchGraceMs: 5 * MINUTE },
    });
    const id = await rig.campaign({}, csvOf([number]));
    await rig.run(10 * SECOND);
    const [open] = await rig.store.openAttempts(id);
    expect(open?.callSid).toBeNull();
    return { rig, id, open: open! };
  };

  it('rescues such an attempt when a webhook names it, and takes its outcome by call id', async () => {
    const { rig, id, open } = await unansweredAttempt();
    expect(
      await rig.dialers[0]!.attemptReported(open.id, 'CA-named-by-webhook', 'completed', {
        durationMs: 9_000,
      }),
    ).toBe('recorded');
    expect(await rig.dialers[0]!.attemptFinished({ attemptId: open.id }, 'failed')).toBe('not_open');
    expect(await rig.store.getContact(id, 1)).toMatchObject({ outcome: 'completed' });
    expect((await rig.store.getContact(id, 1))?.attempts[0]?.callSid).toBe('CA-named-by-webhook');
  });

  it('leaves a ringing attempt untouched by its context reported with another call id', async () => {
    // A context replayed with an invented call id once marked a real, still ringing attempt completed.
    const { rig, id, open } = await unansweredAttempt();
    await rig.store.recordCallSid(id, open.id, 'CA-real');
    expect(await rig.dialers[0]!.attemptReported(open.id, 'CA-invented', 'busy', {})).toBe('not_open');
    expect(await rig.store.openAttempts(id)).toHaveLength(1);
    expect(await rig.dialers[0]!.attemptReported(open.id, 'CA-real', 'busy', {})).toBe('recorded');
    expect(await rig.store.getContact(id, 1)).toMatchObject({ outcome: 'busy' });
  });

  it('waits, as it stops, for a report it is recording, the call id it rescues included', async () => {
    // A draining instance that stopped between the two steps would leave the attempt open.
    const { rig, id, open } = await unansweredAttempt();
    const reported = rig.dialers[0]!.attemptReported(open.id, 'CA-named-by-report', 'busy', {});
    await rig.dialers[0]!.stop();
    expect(await rig.store.openAttempts(id)).toEqual([]);
    expect(await reported).toBe('recorded');
  });
});

describe('agent 429s', () => {
  it('lower the campaign concurrency below the calls in flight, and it climbs back one call at a time', async () => {
    rig = await dialerRig({ options: { agentRecoverEveryMs: MINUTE } });
    const id = await rig.campaign(
      { pacing: { callsPerSecond: 20, maxConcurrent: 10 } },
      csvOf(personNumbers(200)),
    );
    await rig.run(2 * SECOND);
    expect(rig.originator.liveCount).toBe(10);
    await rig.dialers[0]!.agentRefused(id);
    // floor(10 × 0.9) = 9: once the first calls end, at most 9 are in flight until it recovers, a minute later.
    await rig.run(22 * SECOND);
    let most = 0;
    for (let s = 0; s < 30; s++) {
      await rig.run(SECOND);
      most = Math.max(most, rig.originator.liveCount);
    }
    expect(most).toBe(9);
    await rig.run(2 * MINUTE);
    expect(rig.originator.liveCount).toBe(10);
  });
});

describe('outcomes by callback', () => {
  it('takes each attempt outcome once, however many callbacks report it', async () => {
    rig = await dialerRig({ script: () => 'no_reply' });
    const id = await rig.campaign({}, csvOf(['+12125550100']));
    await rig.run(SECOND);
    const [open] = await rig.store.openAttempts(id);
    const dialer = rig.dialers[0]!;
    const results = await Promise.all([
      dialer.attemptFinished({ attemptId: open!.id }, 'completed'),
      dialer.attemptFinished({ attemptId: open!.id }, 'failed'),
      dialer.attemptFinished({ attemptId: 'not-an-attempt' }, 'failed'),
      dialer.attemptFinished({ callSid: 'CA-unknown' }, 'failed'),
    ]);
    expect(results.filter((r) => r === 'recorded')).toHaveLength(1);
    expect((await rig.store.getContact(id, 1))?.attempts).toHaveLength(1);
  });
});
