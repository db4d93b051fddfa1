// What each Telnyx webhook event does (docs/protocols/telnyx.md sections 2 and 9), once verified.
// Unknown events are acknowledged and otherwise ignored.
import type { PreparedCall } from '../../call/carrier-port.js';
import { BadRequestError } from '../../errors.js';
import {
  declineAnswered,
  onInitiated,
  onOutboundAnswered,
  outboundOf,
  type TelnyxCalls,
} from './call-answers.js';
import { decodeClientState } from './client-state.js';
import {
  MACHINE_DETECTION_ENDED,
  MACHINE_GREETING_ENDED,
  telnyxHangupStatus,
  telnyxVerdict,
} from './outbound-events.js';
import { readCallFields, type TelnyxWebhook } from './webhook.js';

const MAX_PARTY_CHARS = 64;
const MAX_REASON_CHARS = 64;

/** A carrier-supplied word for a log line, cut short. */
function logged(value: unknown): string | undefined {
  return typeof value === 'string' ? value.slice(0, MAX_REASON_CHARS) : undefined;
}

/** Acts on one verified webhook; returns the call prepared for a stream, if one was. */
export async function onTelnyxEvent(
  calls: TelnyxCalls,
  webhook: TelnyxWebhook,
): Promise<PreparedCall | undefined> {
  const { log } = calls;
  switch (webhook.eventType) {
    case 'call.initiated':
      return onInitiated(calls, webhook);
    case 'call.answered': {
      const call = readCallFields(webhook);
      const state = decodeClientState(call.clientState);
      if (state?.decline) {
        declineAnswered(calls, call.callSid, state.ctx);
        return;
      }
      const outbound = await outboundOf(calls, webhook, call);
      if (outbound) return onOutboundAnswered(calls, call, outbound);
      log.info({ callSid: call.callSid }, 'telnyx call answered');
      return;
    }
    case MACHINE_DETECTION_ENDED:
    case MACHINE_GREETING_ENDED: {
      const call = readCallFields(webhook);
      const report = telnyxVerdict(webhook.eventType, webhook.payload.result);
      if (report === null) {
        throw new BadRequestError(`telnyx ${webhook.eventType}: payload.result is missing or not a word`);
      }
      await outboundOf(calls, webhook, call);
      log.info({ callSid: call.callSid, result: report.raw }, 'telnyx answering-machine detection');
      calls.intake.machineVerdict('telnyx', call.callSid, report);
      return;
    }
    case 'call.speak.ended':
    case 'call.playback.ended': {
      const call = readCallFields(webhook);
      if (decodeClientState(call.clientState)?.decline)
        calls.api.after('hang up call', call.callSid, (api) => api.hangup(call.callSid));
      return;
    }
    case 'call.hangup':
      return onHangup(calls, webhook);
    case 'streaming.failed': {
      const call = readCallFields(webhook);
      const reason = logged(webhook.payload.failure_reason);
      log.warn({ callSid: call.callSid, reason }, 'telnyx media stream failed');
      return;
    }
    default:
      log.debug({ eventType: webhook.eventType }, 'telnyx event acknowledged');
  }
}

/** A hang-up: logged, and for a call this server placed, its final status. */
async function onHangup(calls: TelnyxCalls, webhook: TelnyxWebhook): Promise<undefined> {
  const call = readCallFields(webhook);
  const cause = webhook.payload.hangup_cause;
  calls.log.info({ callSid: call.callSid, hangupCause: logged(cause) }, 'telnyx call hung up');
  const outbound = await outboundOf(calls, webhook, call);
  if (outbound) {
    const { status, reason } = telnyxHangupStatus(cause);
    calls.intake.outboundStatus({
      carrier: 'telnyx',
      callSid: call.callSid,
      from: call.from.slice(0, MAX_PARTY_CHARS),
      to: call.to.slice(0, MAX_PARTY_CHARS),
      context: outbound.context,
      status,
      reason,
      // Telnyx's times of the call count its ringing too; the call's record has the talk time.
      durationMs: null,
    });
  }
  return undefined;
}
