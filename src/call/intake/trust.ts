// What a carrier request may cause, decided here and nowhere else (docs/security.md). A carrier's
// route says only whether its request was verified: its signature checked with the carrier's
// credentials (or the simulation's own keys, for a simulated carrier), or for Exotel, which signs
// nothing, its source address inside EXOTEL_ALLOWED_CIDRS. Whatever nothing authenticates may cost
// nothing and reveal nothing: the call is answered, and its agent is dialed only once its stream
// presents the single-use stream token.

/** Whether the request that announced a call, or reported on one, was verified. */
export type RequestTrust = 'verified' | 'unverified';

export interface RequestAllowance {
  /** Dial the agent ahead of the stream, which holds an admission slot until the stream comes. */
  readonly prewarm: boolean;
  /** Hand out the bearer token of the call's observer feed. */
  readonly observerToken: boolean;
  /** Read the outbound context it names, and report on that context's attempt. */
  readonly outboundContext: boolean;
  /** Call the carrier's API on its say-so (read a call's status back, say). */
  readonly carrierApi: boolean;
}

const ALLOWANCES: Readonly<Record<RequestTrust, RequestAllowance>> = Object.freeze({
  verified: Object.freeze({ prewarm: true, observerToken: true, outboundContext: true, carrierApi: true }),
  unverified: Object.freeze({
    prewarm: false,
    observerToken: false,
    outboundContext: false,
    carrierApi: false,
  }),
});

export function trustOf(verified: boolean): RequestTrust {
  return verified ? 'verified' : 'unverified';
}

export function allowanceOf(verified: boolean): RequestAllowance {
  return ALLOWANCES[trustOf(verified)];
}
