// The placeholders of calls on the built-in simulated carrier API (src/sim/carrier-api/), which
// takes any credentials: carriers without their own place their calls there, outside production.

/** The caller ID of simulated calls when a request names none and no number is routed. */
export const SIMULATED_CALLER_ID = '+15005550006';
/** The Call Control application simulated Telnyx calls are placed through when none is configured. */
export const SIMULATED_TELNYX_CONNECTION_ID = 'simulated';
