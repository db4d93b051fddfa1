// The simulated callee's calls as Twilio reports them (docs/protocols/twilio.md, "REST";
// docs/protocols/answering-machine-detection.md, section 3): form-encoded status callbacks for each
// step, the asynchronous detection verdict with `AnsweredBy`, each signed with X-Twilio-Signature
// when the server has an auth token.
import { computeTwilioSignature } from '../../../carriers/twilio/signature.js';
import { twilioDialect } from '../../carrier/dialects/twilio.js';
import type { Callee } from '../plan.js';
import { BEEP_SETTLE_MS, FAX_VERDICT_MS, HUMAN_VERDICT_MS, UNSURE_VERDICT_MS } from '../timing.js';
import { type CalleeLineFactory, type PlannedVerdict, postCallback, SIP_CODES } from '../line.js';

export const twilioLine: CalleeLineFactory = ({ call, env, timeoutMs }) => {
  const authToken = env.TWILIO_AUTH_TOKEN || undefined;
  const base = {
    CallSid: call.callSid,
    AccountSid: call.accountSid,
    From: call.from,
    To: call.to,
    Direction: 'outbound-api',
    ApiVersion: '2010-04-01',
  };
  const post = (url: string | null, params: Record<string, string>) => {
    const headers: Record<string, string> = {
      'content-type': 'application/x-www-form-urlencoded',
      'user-agent': 'TwilioProxy/1.1',
    };
    if (authToken !== undefined && url !== null) {
      headers['x-twilio-signature'] = computeTwilioSignature(authToken, url, params);
    }
    return postCallback(url, headers, new URLSearchParams(params).toString(), timeoutMs);
  };

  return {
    dialect: twilioDialect,
    progress: (word) => post(call.statusUrl, { ...base, CallStatus: word }),
    final(word, durationS) {
      const sip = SIP_CODES[word];
      return post(call.statusUrl, {
        ...base,
        CallStatus: word,
        CallDuration: String(durationS),
        ...(sip === null ? {} : { SipResponseCode: sip }),
      });
    },
    verdicts(callee: Callee, sounds, scale): PlannedVerdict[] {
      const planned: Partial<Record<Callee['kind'], [string, number]>> = {
        person: ['human', HUMAN_VERDICT_MS * scale],
        silent: ['unknown', UNSURE_VERDICT_MS * scale],
        // The greeting plays in real time: its end is not sped up.
        voicemail: ['machine_end_beep', sounds.beepEndsAtMs + BEEP_SETTLE_MS],
        fax: ['fax', FAX_VERDICT_MS * scale],
      };
      const verdict = call.amdUrl === null ? undefined : planned[callee.kind];
      if (verdict === undefined) return [];
      const [word, afterMs] = verdict;
      return [
        {
          word,
          afterMs,
          post: () =>
            post(call.amdUrl, {
              ...base,
              AnsweredBy: word,
              MachineDetectionDuration: String(Math.round(afterMs)),
            }),
        },
      ];
    },
  };
};
