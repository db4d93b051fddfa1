// The call core's intake as a test double for a carrier's webhook routes: records what the routes
// ask of it and answers as the test says.
import type { VerdictReport } from '../../src/call/amd-gate.js';
import type {
  Admission,
  CallAnnouncement,
  CallIntake,
  OutboundStatusReport,
  PreparedCall,
} from '../../src/call/carrier-port.js';

export interface FakeIntake extends CallIntake {
  admission: Admission;
  decline: { message: string; redirectUrl: string | null };
  admitted: string[];
  prepared: CallAnnouncement[];
  refusals: Array<{ carrier: string; reason: string }>;
  /** Outbound calls' final statuses and detection verdicts the routes reported. */
  statuses: OutboundStatusReport[];
  verdicts: Array<{ carrier: string; callSid: string; report: VerdictReport }>;
  /** The PreparedCall returned for each prepared call, in order. */
  answers: PreparedCall[];
}

export function createFakeIntake(opts: { mediaBase?: string; instance?: string } = {}): FakeIntake {
  const mediaBase = opts.mediaBase ?? 'wss://bridge.example.com';
  const instance = opts.instance ?? 'i-1';
  let count = 0;
  const intake: FakeIntake = {
    admission: 'admitted',
    decline: { message: "Sorry, we can't take your call right now.", redirectUrl: null },
    admitted: [],
    prepared: [],
    refusals: [],
    statuses: [],
    verdicts: [],
    outboundContext: () => null,
    outboundStatus(report) {
      intake.statuses.push(report);
    },
    machineVerdict(carrier, callSid, report) {
      intake.verdicts.push({ carrier, callSid, report });
    },
    answers: [],
    admit(carrier) {
      intake.admitted.push(carrier);
      return intake.admission;
    },
    prepare(call) {
      intake.prepared.push(call);
      count += 1;
      // Shaped like a real stream token: version, base64url body, signature.
      const token = `v1.eyJjYWxsIjoi${count}In0.c2lnbmF0dXJl${count}`;
      const prepared: PreparedCall = {
        token,
        mediaUrl: `${mediaBase}/media/${call.carrier}/${instance}/${token}`,
        observerToken: `observer-${count}`,
        profile: 'default',
      };
      intake.answers.push(prepared);
      return prepared;
    },
    refused(carrier, reason) {
      intake.refusals.push({ carrier, reason });
    },
  };
  return intake;
}
