// The call core's intake as a test double for a carrier's webhook routes: records what the routes
// ask of it (admissions, announced calls, refusals) and answers as the test says, with media URLs
// shaped as the core makes them (`<base>/media/<carrier>/<instance>/<token>`).
import type { VerdictReport } from '../../src/call/outbound/amd-gate.js';
import type {
  Admission,
  CallAnnouncement,
  CallIntake,
  OutboundStatusReport,
  PreparedCall,
} from '../../src/call/carrier-port.js';
import { allowanceOf } from '../../src/call/intake/trust.js';

export interface FakeIntake extends CallIntake {
  admission: Admission;
  decline: { message: string; redirectUrl: string | null; audioUrl?: string | null };
  admitted: string[];
  /** Every call the routes announced, in order. */
  announced: CallAnnouncement[];
  refusals: Array<{ carrier: string; reason: string }>;
  /** Outbound calls' final statuses and detection verdicts the routes reported. */
  statuses: OutboundStatusReport[];
  verdicts: Array<{ carrier: string; callSid: string; report: VerdictReport }>;
  /** Outbound calls' own ids the routes learned from callbacks, with the attempt each names. */
  identified: Array<{ carrier: string; attemptId: string | null; callSid: string }>;
  /** The PreparedCall returned for each announced call, in order. */
  prepared: PreparedCall[];
}

/** The instance every fake media URL names. */
export const INSTANCE = 'i-1';

export function createFakeIntake(opts: { mediaBase?: string } = {}): FakeIntake {
  const mediaBase = opts.mediaBase ?? 'wss://bridge.example.com';
  let count = 0;
  const intake: FakeIntake = {
    admission: 'admitted',
    decline: { message: "Sorry, we can't take your call right now.", redirectUrl: null },
    admitted: [],
    announced: [],
    refusals: [],
    statuses: [],
    verdicts: [],
    identified: [],
    outboundContext: async () => null,
    // The core's own rule (src/call/intake/trust.ts): the routes ask, the fake answers as the core would.
    allowance: allowanceOf,
    outboundCallIdentified(carrier, context, callSid) {
      intake.identified.push({ carrier, attemptId: context.attemptId, callSid });
    },
    outboundStatus(report) {
      intake.statuses.push(report);
    },
    machineVerdict(carrier, callSid, report) {
      intake.verdicts.push({ carrier, callSid, report });
    },
    prepared: [],
    admit(carrier) {
      intake.admitted.push(carrier);
      return intake.admission;
    },
    prepare(call) {
      intake.announced.push(call);
      count += 1;
      // Shaped like a real stream token: version, base64url body, signature.
      const token = `v1.eyJjYWxsIjoi${count}In0.c2lnbmF0dXJl${count}`;
      const prepared: PreparedCall = {
        token,
        mediaUrl: `${mediaBase}/media/${call.carrier}/${INSTANCE}/${token}`,
        observerToken: allowanceOf(call.verified).observerToken ? `observer-${count}` : null,
        profile: 'default',
      };
      intake.prepared.push(prepared);
      return prepared;
    },
    refused(carrier, reason) {
      intake.refusals.push({ carrier, reason });
    },
    // The core's once-only rule is tested with the core (test/call/intake/intake.test.ts, test/e2e/security-holes.test.ts).
    prepareOnce: async (call) => intake.prepare(call),
  };
  return intake;
}
