// Asking the carrier to place a claimed attempt's call, and reading its answer. The call id is
// recorded the moment it returns (where that id names the request rather than the call, the call's
// own id replaces it once a callback brings it: `Outcomes.callIdentified`). A carrier API error the
// carrier may lift (429, 5xx) puts the contact back without spending an attempt, after a delay that
// doubles per refusal of that contact; one refused for good fails the attempt (carrier-errors.ts);
// no answer at all leaves the attempt open for a callback to name it (reconcile.ts).
import { backoffDelayMs } from '../retry.js';
import type { CampaignRecord, ContactRecord, OpenAttempt } from '../store/campaign-records.js';
import { classifyOriginateError } from './carrier-errors.js';
import type { DialerContext } from './dialer-context.js';
import type { Outcomes } from './outcomes.js';
import type { AmdRequest } from './ports.js';
import { renderTemplate } from './template.js';

export class Dispatcher {
  /** Attempts this process is asking the carrier to place right now, and what follows each answer. */
  private readonly inFlight = new Map<string, Promise<unknown>>();

  constructor(
    private readonly ctx: DialerContext,
    private readonly outcomes: Outcomes,
  ) {}

  isDispatching(attemptId: string): boolean {
    return this.inFlight.has(attemptId);
  }

  /** Resolves once every request to the carrier made so far is answered and recorded (a drain). */
  async answered(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight.values()]);
  }

  /**
   * Asks the carrier to place the call. The request itself is not waited for by `idle` or `stop`
   * (it is bounded by the carrier client's timeout, and the attempt is durable either way); what
   * follows its answer is.
   */
  dispatch(campaign: CampaignRecord, contact: ContactRecord, attempt: OpenAttempt): void {
    let amd: AmdRequest | null;
    try {
      amd = amdRequest(campaign, contact);
    } catch (err) {
      // Placeholders are checked at upload and at start; reaching here means the profile changed.
      const reason = (err as Error).message;
      void this.guard(this.outcomes.settle(attempt, 'failed', { reason }, { final: true }));
      return;
    }
    const request = {
      to: contact.phone,
      from: attempt.from,
      carrier: campaign.spec.carrier,
      profile: campaign.spec.profile,
      variables: contact.variables,
      context: attempt.id,
      campaignId: campaign.id,
      amd,
      recording: campaign.spec.recording ?? null,
    };
    let call: Promise<{ callSid: string }>;
    try {
      call = this.ctx.originator.originate(request);
    } catch (err) {
      call = Promise.reject(err);
    }
    const answered = call
      .then(
        ({ callSid }) => this.guard(this.placed(campaign, attempt, callSid)),
        (err: unknown) => this.guard(this.refused(campaign, contact, attempt, err)),
      )
      .finally(() => this.inFlight.delete(attempt.id));
    this.inFlight.set(attempt.id, answered);
  }

  /** Tracks work started outside a pass and logs its failure (a store that went away, say). */
  private guard(work: Promise<unknown>): Promise<unknown> {
    return this.ctx.track(
      work.catch((err: Error) =>
        this.ctx.log.error({ err: err.message }, 'dialer step failed; reconciliation will retry it'),
      ),
    );
  }

  private async placed(campaign: CampaignRecord, attempt: OpenAttempt, callSid: string) {
    const { store, originator, metrics, log } = this.ctx;
    metrics.campaignDialsStarted.inc();
    if (!(await store.recordCallSid(campaign.id, attempt.id, callSid))) {
      log.debug(
        { attemptId: attempt.id, callSid },
        'the call ended, or a callback named it, before this id was recorded',
      );
    }
    // A cancel that came while the carrier was placing this call could not hang it up: do it now,
    // by the call's own id if a callback has named it meanwhile.
    if ((await store.getCampaign(campaign.id))?.state === 'cancelled') {
      const current = (await store.getOpenAttempt(campaign.id, attempt.id))?.callSid ?? callSid;
      await originator.hangup(current, campaign.spec.carrier).catch((err: Error) => {
        log.warn(
          { attemptId: attempt.id, err: err.message },
          'could not hang up a call of a cancelled campaign',
        );
      });
    }
  }

  private async refused(
    campaign: CampaignRecord,
    contact: ContactRecord,
    attempt: OpenAttempt,
    err: unknown,
  ) {
    const { options } = this.ctx;
    const { kind, code } = classifyOriginateError(err);
    this.ctx.metrics.campaignCarrierErrors.inc({ kind });
    const log = this.ctx.log.child({ campaignId: campaign.id, attemptId: attempt.id, code });
    if (kind === 'unknown') {
      log.warn('the carrier did not answer the request to place a call: waiting for a callback to name it');
      return;
    }
    if (kind === 'retry_later' && contact.carrierErrors + 1 < options.maxCarrierRefusals) {
      const delay = backoffDelayMs(contact.carrierErrors + 1, {
        firstDelayMs: options.carrierRetryDelayMs,
        maxDelayMs: options.carrierRetryMaxDelayMs,
      });
      log.warn({ retryInMs: delay }, 'the carrier refused to place a call for now: the contact waits');
      await this.outcomes.refund(attempt, `carrier error ${code}`, this.ctx.clock.now() + delay);
      return;
    }
    log.warn('the carrier refused to place a call: the attempt fails');
    await this.outcomes.settle(attempt, 'failed', { reason: `carrier error ${code}` });
  }
}

/** The detection settings of one call, the voicemail filled from the contact's variables. */
export function amdRequest(campaign: CampaignRecord, contact: ContactRecord): AmdRequest | null {
  const { amd } = campaign.spec;
  if (amd.mode === 'off') return null;
  const text = amd.voicemail?.text;
  return {
    mode: amd.mode,
    voicemailText: text === undefined ? null : renderTemplate(text, contact.variables),
    voicemailAudioUrl: amd.voicemail?.audioUrl ?? null,
  };
}
