// The pure rules of outbound calling: the campaign JSON, calling windows, retries, carrier errors,
// caller IDs, the simulated callee's number plan and the results' cells.
import { describe, expect, it } from 'vitest';
import { campaignSpec } from '../../src/outbound/campaign-spec.js';
import { CallerIdPool } from '../../src/outbound/caller-ids.js';
import { classifyOriginateError } from '../../src/outbound/carrier-errors.js';
import type { CallingWindow } from '../../src/store/campaign-records.js';
import { nextStep } from '../../src/outbound/retry-policy.js';
import { isWindowOpen, nextOpening, windowProblem } from '../../src/outbound/windows.js';
import { answeredBy, calleeFor, expectedOutcome } from '../../src/sim/callee/plan.js';
import { profileFixture } from './rig.js';

const context = {
  profiles: { default: profileFixture(), sales: profileFixture({ name: 'sales' }) },
  defaultProfile: 'default',
  carriers: ['twilio', 'telnyx'],
};
const problem = (body: unknown) => {
  try {
    campaignSpec(body, context);
    return 'ok';
  } catch (err) {
    expect((err as { code?: string }).code).toBe('CALLBRIDGE_BAD_REQUEST');
    return (err as Error).message;
  }
};

describe('the campaign JSON', () => {
  it('fills every default from a name alone', () => {
    expect(campaignSpec({ name: ' renewals ' }, context)).toEqual({
      name: 'renewals',
      profile: 'default',
      carrier: null,
      from: [],
      schedule: { timezone: 'UTC', windows: [] },
      pacing: { callsPerSecond: 1, maxConcurrent: 10 },
      retry: { maxAttempts: 1, delaySeconds: 3600, on: ['busy', 'no_answer'] },
      amd: { mode: 'off', voicemail: null },
      breaker: { failureShare: 0.5, windowSeconds: 120, minCalls: 10 },
    });
  });

  it("takes the contract's example as it is", () => {
    const spec = campaignSpec(
      {
        name: 'renewals',
        profile: 'default',
        carrier: 'twilio',
        from: ['+12125550100', '+12125550101'],
        schedule: {
          timezone: 'America/New_York',
          windows: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri'], start: '09:00', end: '18:00' }],
        },
        pacing: { callsPerSecond: 2, maxConcurrent: 20 },
        retry: { maxAttempts: 3, delaySeconds: 3600, on: ['busy', 'no_answer', 'failed', 'voicemail'] },
        amd: { mode: 'voicemail', voicemail: { text: 'Hi {{first_name}}, this is Example Dental…' } },
        breaker: { failureShare: 0.5, windowSeconds: 120, minCalls: 5 },
      },
      context,
    );
    expect(spec).toMatchObject({ carrier: 'twilio', amd: { mode: 'voicemail' }, breaker: { minCalls: 5 } });
  });

  it.each([
    [null, 'invalid campaign: must be an object, got null'],
    [[], 'invalid campaign: must be an object'],
    [{}, 'invalid campaign: name: is required'],
    [{ name: '' }, 'invalid campaign: name: must not be empty, got ""'],
    [{ name: 'x', extra: 1 }, 'invalid campaign: extra: unknown field'],
    [
      { name: 'x', pacing: { callsPerSecond: 0 } },
      'invalid campaign: pacing.callsPerSecond: must be a number from 0.01 to 100, got 0',
    ],
    [
      { name: 'x', pacing: { callsPerSecond: '2' } },
      'invalid campaign: pacing.callsPerSecond: must be a number from 0.01 to 100, got "2"',
    ],
    [
      { name: 'x', pacing: { maxConcurrent: 2.5 } },
      'invalid campaign: pacing.maxConcurrent: must be an integer, got 2.5',
    ],
    [
      { name: 'x', pacing: { maxConcurrent: 5000 } },
      'invalid campaign: pacing.maxConcurrent: must be an integer from 1 to 1000, got 5000',
    ],
    [
      { name: 'x', retry: { on: ['busy', 'busy'] } },
      'invalid campaign: retry.on: must not list the same entry twice',
    ],
    [
      { name: 'x', retry: { on: ['voicemail_left'] } },
      'invalid campaign: retry.on[0]: must be one of busy, no_answer, failed, voicemail, got "voicemail_left"',
    ],
    [
      { name: 'x', retry: { maxAttempts: 0 } },
      'invalid campaign: retry.maxAttempts: must be an integer from 1 to 10, got 0',
    ],
    [
      { name: 'x', schedule: { windows: [{ days: ['monday'], start: '09:00', end: '17:00' }] } },
      'invalid campaign: schedule.windows[0].days[0]: must be one of mon, tue, wed, thu, fri, sat, sun, got "monday"',
    ],
    [
      { name: 'x', schedule: { windows: [{ days: ['mon'], start: '18:00', end: '09:00' }] } },
      'invalid campaign: schedule.windows[0]: end must be after start; split a window that crosses midnight in two (…–24:00 and 00:00–…)',
    ],
    [
      { name: 'x', schedule: { windows: [{ days: ['mon'], start: '9:00', end: '17:00' }] } },
      'invalid campaign: schedule.windows[0]: start must be a time of day, HH:MM from 00:00 to 23:59',
    ],
    [
      { name: 'x', schedule: { windows: [{ days: [], start: '09:00', end: '17:00' }] } },
      'invalid campaign: schedule.windows[0].days: expected array length to be greater or equal to 1',
    ],
    [
      { name: 'x', schedule: { timezone: 'Mars/Base' } },
      'invalid campaign: schedule.timezone: must be an IANA time zone, like America/New_York',
    ],
    [
      { name: 'x', profile: 'nobody' },
      'invalid campaign: profile: no profile "nobody"; known: default, sales',
    ],
    [
      { name: 'x', carrier: 'pigeon' },
      'invalid campaign: carrier: must be one of twilio, telnyx, got "pigeon"',
    ],
    [{ name: 'x', from: ['12125550100'] }, 'invalid campaign: from[0]: must be a valid E.164 number'],
    [{ name: 'x', from: ['+12125550100', '+1 212 555 0100'] }, 'invalid campaign: from[1]: is listed twice'],
    [
      { name: 'x', amd: { mode: 'voicemail' } },
      'invalid campaign: amd.voicemail: mode voicemail needs a voicemail text or audioUrl',
    ],
    [
      { name: 'x', amd: { mode: 'hangup', voicemail: { text: 'hi' } } },
      'invalid campaign: amd.voicemail: is only used with mode voicemail, not hangup',
    ],
    [
      { name: 'x', amd: { voicemail: { text: 'hi', audioUrl: 'ftp://a.example/v.wav' } } },
      'invalid campaign: amd.voicemail.audioUrl: must be an http or https URL',
    ],
    [
      { name: 'x', amd: { voicemail: { audioUrl: 'file:///etc/passwd' } } },
      'invalid campaign: amd.voicemail.audioUrl: must be an http or https URL',
    ],
    [
      { name: 'x', amd: { voicemail: {} } },
      'invalid campaign: amd.voicemail: mode voicemail needs a voicemail text or audioUrl',
    ],
    [
      { name: 'x', amd: { voicemail: { audioUrl: 'https://me:pw@a.example/v.wav' } } },
      'invalid campaign: amd.voicemail.audioUrl: must not hold a user name or password',
    ],
    [
      { name: 'x', amd: { voicemail: { audioUrl: 'https://' } } },
      'invalid campaign: amd.voicemail.audioUrl: must be an http or https URL',
    ],
    [
      { name: 'x', breaker: { failureShare: 0 } },
      'invalid campaign: breaker.failureShare: must be a number above 0 and at most 1, got 0',
    ],
  ])('refuses %j', (body, message) => {
    expect(problem(body)).toBe(message);
  });

  it.each([
    ['a right-to-left override', 'invoice\u202Egpj.exe'],
    ['a left-to-right isolate', 'a\u2066b'],
    ['an Arabic letter mark', 'a\u061Cb'],
    ['a newline', 'renewals\nFAKE LOG LINE'],
    ['an escape sequence', 'renewals\u001b[31m'],
    ['a C1 control', 'renewals\u0085'],
    ['DEL', 'renewals\u007f'],
  ])('refuses a name with %s', (_, name) => {
    // Issue 19: campaign names took control and right-to-left override characters, which rewrite
    // what a terminal, a log or a spreadsheet shows around them.
    expect(problem({ name })).toBe(
      'invalid campaign: name: must not contain control or bidirectional-override characters',
    );
  });

  it('takes a name in any script, and refuses one that is only spaces', () => {
    expect(campaignSpec({ name: 'تجديد العقود · renouvellements' }, context).name).toBe(
      'تجديد العقود · renouvellements',
    );
    expect(problem({ name: '   ' })).toBe('invalid campaign: name: must not be blank');
  });

  it('names every bad field once, in one answer', () => {
    expect(problem({ name: 'x', pacing: { callsPerSecond: -1, maxConcurrent: 0 }, nope: true })).toBe(
      'invalid campaign: nope: unknown field; pacing.callsPerSecond: must be a number from 0.01 to 100, got -1; pacing.maxConcurrent: must be an integer from 1 to 1000, got 0',
    );
    expect(problem({ name: 'x', profile: 'nobody', from: ['+1'] })).toBe(
      'invalid campaign: profile: no profile "nobody"; known: default, sales; from[0]: must be a valid E.164 number',
    );
  });
});

describe('calling windows', () => {
  const weekdays: CallingWindow[] = [
    { days: ['mon', 'tue', 'wed', 'thu', 'fri'], start: '09:00', end: '17:30' },
  ];
  const at = (iso: string) => Date.parse(iso);

  it('is open from start to end in local time, weekdays only', () => {
    expect(isWindowOpen(weekdays, 'America/New_York', at('2025-01-06T14:00:00Z'))).toBe(true); // Mon 09:00
    expect(isWindowOpen(weekdays, 'America/New_York', at('2025-01-06T13:59:59Z'))).toBe(false);
    expect(isWindowOpen(weekdays, 'America/New_York', at('2025-01-06T22:29:59Z'))).toBe(true); // 17:29:59
    expect(isWindowOpen(weekdays, 'America/New_York', at('2025-01-06T22:30:00Z'))).toBe(false);
    expect(isWindowOpen(weekdays, 'America/New_York', at('2025-01-04T15:00:00Z'))).toBe(false); // Saturday
    expect(isWindowOpen([], 'UTC', at('2025-01-04T03:00:00Z'))).toBe(true);
  });

  it('finds the next opening: later today, after a weekend, across midnight, across DST', () => {
    expect(nextOpening(weekdays, 'America/New_York', at('2025-01-06T12:00:00Z'))).toBe(
      at('2025-01-06T14:00:00Z'),
    );
    expect(nextOpening(weekdays, 'America/New_York', at('2025-01-06T15:00:00Z'))).toBe(
      at('2025-01-06T15:00:00Z'),
    );
    expect(nextOpening(weekdays, 'America/New_York', at('2025-01-10T23:00:00Z'))).toBe(
      at('2025-01-13T14:00:00Z'),
    );
    expect(nextOpening(weekdays, 'Asia/Tokyo', at('2025-01-06T14:30:00Z'))).toBe(at('2025-01-07T00:00:00Z'));
    // Friday before the spring change: Monday 09:00 is now EDT (UTC-4).
    expect(nextOpening(weekdays, 'America/New_York', at('2025-03-07T23:00:00Z'))).toBe(
      at('2025-03-10T13:00:00Z'),
    );
    // Friday before the autumn change: Monday 09:00 is now EST (UTC-5).
    expect(nextOpening(weekdays, 'America/New_York', at('2025-10-31T22:00:00Z'))).toBe(
      at('2025-11-03T14:00:00Z'),
    );
  });

  it('opens a window that starts in the hour a spring-forward skips when the clocks land', () => {
    const night: CallingWindow[] = [{ days: ['sun'], start: '02:30', end: '04:00' }];
    // 02:30 does not exist on 9 March 2025 in New York; 03:00 EDT (07:00 UTC) is the first open minute.
    const opening = nextOpening(night, 'America/New_York', at('2025-03-09T05:00:00Z'));
    expect(opening).toBe(at('2025-03-09T07:30:00Z'));
    expect(isWindowOpen(night, 'America/New_York', opening!)).toBe(true);
  });

  it('knows a window that ends at midnight, and none that names no day', () => {
    const evening: CallingWindow[] = [{ days: ['fri'], start: '20:00', end: '24:00' }];
    expect(isWindowOpen(evening, 'UTC', at('2025-01-10T23:59:00Z'))).toBe(true);
    expect(isWindowOpen(evening, 'UTC', at('2025-01-11T00:00:00Z'))).toBe(false);
    expect(windowProblem({ days: ['fri'], start: '24:00', end: '24:00' })).toMatch(/^start must be/);
    expect(windowProblem({ days: ['fri'], start: '08:00', end: '25:00' })).toMatch(/^end must be/);
    expect(nextOpening([{ days: [], start: '08:00', end: '09:00' }], 'UTC', 0)).toBeNull();
  });
});

describe('retries', () => {
  const retry = { maxAttempts: 3, delaySeconds: 60, on: ['busy', 'voicemail'] as const };
  const step = (
    outcome: Parameters<typeof nextStep>[0]['outcome'],
    attemptsMade: number,
    campaignOpen = true,
  ) =>
    nextStep({ outcome, attemptsMade, retry: { ...retry, on: [...retry.on] }, campaignOpen, nowMs: 1_000 });

  it('retries listed outcomes after the delay while the budget lasts', () => {
    expect(step('busy', 1)).toEqual({ state: 'retry', dueAtMs: 61_000 });
    expect(step('machine', 2)).toEqual({ state: 'retry', dueAtMs: 61_000 });
    expect(step('voicemail_left', 2)).toEqual({ state: 'retry', dueAtMs: 61_000 });
    expect(step('busy', 3)).toEqual({ state: 'done', outcome: 'busy' });
  });

  it('never retries an unlisted outcome, a completed call, or anything once the campaign has ended', () => {
    expect(step('no_answer', 1)).toEqual({ state: 'done', outcome: 'no_answer' });
    expect(step('completed', 1)).toEqual({ state: 'done', outcome: 'completed' });
    expect(step('cancelled', 1)).toEqual({ state: 'done', outcome: 'cancelled' });
    expect(step('busy', 1, false)).toEqual({ state: 'done', outcome: 'busy' });
  });
});

describe('carrier errors', () => {
  it('reads retryable and status, never the message', () => {
    expect(classifyOriginateError({ retryable: true, status: 503, code: 'X' })).toEqual({
      kind: 'retry_later',
      code: 'X',
    });
    expect(classifyOriginateError({ retryable: true, status: 429 }).kind).toBe('retry_later');
    expect(classifyOriginateError({ retryable: true }).kind).toBe('unknown');
    expect(classifyOriginateError({ retryable: false, status: 400 }).kind).toBe('failed');
    expect(classifyOriginateError(new TypeError('a defect')).kind).toBe('failed');
    expect(classifyOriginateError('text').kind).toBe('failed');
    expect(classifyOriginateError(null)).toEqual({ kind: 'failed', code: 'UNKNOWN' });
  });
});

describe('caller IDs', () => {
  it('rotates through the pool, preferring numbers of the contact country', () => {
    const pool = new CallerIdPool(['+12125550100', '+442079460958', '+12125550101', '+442079460959']);
    expect([pool.pick('US'), pool.pick('US'), pool.pick('US')]).toEqual([
      '+12125550100',
      '+12125550101',
      '+12125550100',
    ]);
    expect([pool.pick('GB'), pool.pick('GB')]).toEqual(['+442079460958', '+442079460959']);
    expect([pool.pick('FR'), pool.pick(null)]).toEqual(['+12125550100', '+442079460958']);
    expect(new CallerIdPool([]).pick('US')).toBeNull();
  });
});

describe('the simulated callee number plan', () => {
  it.each([
    ['+12125550100', 'person', 'completed', 'completed'],
    ['+12125550139', 'person', 'completed', 'completed'],
    ['+12125550145', 'silent', 'completed', 'completed'],
    ['+12125550150', 'voicemail', 'voicemail_left', 'machine'],
    ['+12125550162', 'fax', 'machine', 'machine'],
    ['+12125550166', 'busy', 'busy', 'busy'],
    ['+12125550177', 'busy', 'busy', 'busy'],
    ['+12125550188', 'no_answer', 'no_answer', 'no_answer'],
    ['+12125550199', 'unreachable', 'failed', 'failed'],
  ])('%s: %s, %s with voicemail, %s with hang-up', (number, kind, voicemail, hangup) => {
    const callee = calleeFor(number);
    expect(callee.kind).toBe(kind);
    expect(expectedOutcome(callee, 'voicemail')).toBe(voicemail);
    expect(expectedOutcome(callee, 'hangup')).toBe(hangup);
  });

  it('answers 65-69 on a retry, treats an unsure verdict as a person, and never answers without digits', () => {
    expect(calleeFor('+12125550166', 2).kind).toBe('person');
    expect(answeredBy(calleeFor('+12125550145'))).toBe('unknown');
    expect(answeredBy(calleeFor('+12125550150'))).toBe('machine');
    expect(answeredBy(calleeFor('+12125550175'))).toBeNull();
    expect(expectedOutcome(calleeFor('+12125550150'), 'off')).toBe('completed');
    expect(calleeFor('+1').kind).toBe('unreachable');
  });
});
