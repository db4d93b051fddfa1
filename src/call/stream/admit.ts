// Whether a stream that has started may become a call (docs/architecture.md section 4.2): its
// stream token is valid and claimed once, its format can be carried, its call is not carried here
// already, and a call prepared on another instance fits this one's capacity; an outbound call's
// context is read here, once, never on the per-frame path. No socket is needed: the answer says
// what the stream's socket does next.
import type { Logger } from 'pino';
import { unsupportedFormatReason } from '../../audio/format.js';
import type { Config } from '../../config/types.js';
import type { LegEvent } from '../carrier-port.js';
import { checkStreamToken, type StreamGrant } from '../intake/stream-token.js';
import { prewarmKey } from '../intake/prewarm.js';
import { type OutboundContext, outboundContexts } from '../outbound/outbound-context.js';
import { CLOSE } from './carrier-leg.js';
import type { CallRegistry } from '../watch/registry.js';
import type { MediaSocketDeps } from './deps.js';

export type StreamStart = Extract<LegEvent, { type: 'start' }>;

export type StreamAdmission =
  /** A call: with the grant its token carried and, for an outbound call, its context (or none left). */
  | { outcome: 'admitted'; grant: StreamGrant; outbound: OutboundContext | null }
  /** Not a call we will carry: the socket is closed with `code`, counted by `reason`. */
  | { outcome: 'refused'; reason: string; code: number }
  /** A real call this instance cannot carry now: the caller hears the decline, then the line hangs up. */
  | { outcome: 'declined'; reason: string }
  /** The carrier went away while the stream was checked: nothing is left to do. */
  | { outcome: 'gone' };

export interface AdmitContext {
  carrier: string;
  /** The stream token from the media URL's path, where the carrier carries it there. */
  pathToken: string | undefined;
  logger: Logger;
  /** Whether the stream still waits for this answer (read after each store round trip). */
  waiting(): boolean;
}

export interface AdmitDeps extends Pick<
  MediaSocketDeps,
  'store' | 'metrics' | 'pending' | 'admitCall' | 'releaseRemotePrewarm'
> {
  config: Pick<Config, 'streamTokenSecret' | 'streamTokenTtlMs' | 'instanceId'>;
  registry: Pick<CallRegistry, 'has'>;
}

const refused = (reason: string, code: number = CLOSE.policyViolation): StreamAdmission => ({
  outcome: 'refused',
  reason,
  code,
});

export async function admitStream(
  start: StreamStart,
  ctx: AdmitContext,
  deps: AdmitDeps,
): Promise<StreamAdmission> {
  const { config } = deps;
  const { carrier, logger } = ctx;
  const check = checkStreamToken(config.streamTokenSecret, start.token ?? ctx.pathToken, {
    carrier,
    callSid: start.callSid,
  });
  if (!check.ok) return refused(`token_${check.reason}`);
  const { grant } = check;
  const unsupported = unsupportedFormatReason(start.mediaFormat);
  if (unsupported !== null) {
    logger.warn({ problem: unsupported }, 'media format cannot be carried');
    return refused('unsupported_format', CLOSE.unsupportedData);
  }
  let first: boolean;
  try {
    first = await deps.store.claimOnce(`stream-token:${grant.nonce}`, config.streamTokenTtlMs);
  } catch (err) {
    logger.error({ err: (err as Error).message }, 'store unavailable while admitting a stream');
    return { outcome: 'declined', reason: 'store_unavailable' };
  }
  if (!first) return refused('token_replayed');
  deps.pending?.settled(prewarmKey(carrier, start.callSid));
  if (!ctx.waiting()) return { outcome: 'gone' };
  if (deps.registry.has(start.callSid)) return refused('duplicate_call');
  if (grant.instance !== config.instanceId) {
    // Prepared elsewhere: this instance's own capacity and drain state decide, as for a new call.
    deps.releaseRemotePrewarm({ instance: grant.instance, carrier, callSid: start.callSid });
    deps.metrics.streamPrewarm.inc({ carrier, outcome: 'other_instance' });
    const admission = deps.admitCall();
    if (admission !== 'admitted') return { outcome: 'declined', reason: admission };
  }
  if (grant.context === undefined) return { outcome: 'admitted', grant, outbound: null };
  let outbound: OutboundContext | null;
  try {
    outbound = await outboundContexts(config.streamTokenSecret, deps.store).resolve(grant.context, carrier);
  } catch (err) {
    logger.error({ err: (err as Error).message }, 'store unavailable while reading a call context');
    return { outcome: 'declined', reason: 'store_unavailable' };
  }
  if (!ctx.waiting()) return { outcome: 'gone' };
  if (outbound === null) logger.warn('the call context is gone or expired: the call has none');
  return { outcome: 'admitted', grant, outbound };
}
