// What an outbound call carries from the request that placed it to its session: the campaign
// attempt (or none, for a single call), the profile, the contact's variables and the answering-
// machine settings (docs/architecture.md section 5.2).
//
// The context stays server-side, in the shared store, behind an opaque id; only a reference to that
// id rides through the carrier (webhook URL, client state, CustomField) and then in the stream
// token, because whatever rides through a carrier is logged by it (docs/security.md, "Outbound
// contexts"). The reference is a capability, bound: it is HMAC-bound to the carrier the call was
// placed through, so a forged or misdirected one is refused without a store read; the context it
// names is bound to that carrier and to an expiry, besides its attempt; the core reads it only for
// a verified request, and an attempt is finished only by a report about its own recorded call id.
import { createHmac, randomBytes } from 'node:crypto';
import { constantTimeEqual } from '../../auth.js';
import { readRecordingSettings, type RecordingSettings } from '../../config/recording.js';
import type { OutboundContextRecords } from '../../store/store.js';

/** What to do when detection hears a machine (docs/protocols/answering-machine-detection.md). */
export interface OutboundAmd {
  /** `voicemail`: leave the message after the beep; `hangup`: end the call on a machine. */
  mode: 'voicemail' | 'hangup';
  /** The message, placeholders filled. */
  voicemailText: string | null;
  voicemailAudioUrl: string | null;
}

export interface OutboundContext {
  /** The campaign attempt this call is; null for a single call placed with `POST /v1/calls`. */
  attemptId: string | null;
  campaignId: string | null;
  /** The contact's position in its campaign; null for a single call. */
  contact: number | null;
  profile: string;
  variables: Record<string, string>;
  /** null: no answering-machine detection; the agent speaks as soon as the call is answered. */
  amd: OutboundAmd | null;
  /** Recording asked for by the call or its campaign; absent: as the profile says. */
  recording?: RecordingSettings;
}

const VERSION = 'r1';
/** `r1.<id: 128 random bits>.<carrier binding>`, base64url: 48 characters. */
const REFERENCE = /^r1\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{22}$/;
/** A context reference rides in a URL: past this it is not one we issued. */
export const MAX_CONTEXT_REF_CHARS = 64;
/** What one context may weigh in the store (variables and voicemail text, JSON). */
export const MAX_CONTEXT_BYTES = 64 * 1024;

/**
 * How long a context placed now stays good: past a call's ringing, its longest conversation and the
 * carrier's last callback about it.
 */
export const OUTBOUND_CONTEXT_TTL_MS = 12 * 60 * 60_000;

/** What a kept context is bound to besides its attempt. */
export interface ContextBinding {
  /** The carrier the call was placed through: no other carrier's request may present it. */
  carrier: string;
  expiresAtMs: number;
}

function bindingTag(secret: string, carrier: string, id: string): string {
  return createHmac('sha256', `outbound-context:${secret}`)
    .update(`${VERSION}\n${carrier}\n${id}`)
    .digest('base64url')
    .slice(0, 22);
}

/** A fresh reference for a call placed through `carrier`, with the id the store keeps it under. */
export function issueContextRef(secret: string, carrier: string): { id: string; ref: string } {
  const id = randomBytes(16).toString('base64url');
  return { id, ref: `${VERSION}.${id}.${bindingTag(secret, carrier, id)}` };
}

/** The store id a reference names, or null when this server did not issue it for `carrier`. */
export function contextIdOf(secret: string, ref: unknown, carrier: string): string | null {
  if (typeof ref !== 'string' || ref.length > MAX_CONTEXT_REF_CHARS || !REFERENCE.test(ref)) return null;
  const [, id, tag] = ref.split('.') as [string, string, string];
  return constantTimeEqual(tag, bindingTag(secret, carrier, id)) ? id : null;
}

/** The context as the store keeps it, with its binding; throws RangeError when it is too large. */
export function encodeContext(context: OutboundContext, binding: ContextBinding): string {
  const encoded = JSON.stringify({ ...context, carrier: binding.carrier, expiresAtMs: binding.expiresAtMs });
  if (Buffer.byteLength(encoded) > MAX_CONTEXT_BYTES) {
    throw new RangeError(
      `the call's context (variables and voicemail text) is too large: at most ${MAX_CONTEXT_BYTES} bytes`,
    );
  }
  return encoded;
}

function isRecordOfStrings(value: unknown): value is Record<string, string> {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    Object.values(value).every((v) => typeof v === 'string')
  );
}

function isAmd(value: unknown): value is OutboundAmd | null {
  if (value === null) return true;
  if (typeof value !== 'object' || value === undefined) return false;
  const amd = value as Record<string, unknown>;
  return (
    (amd.mode === 'voicemail' || amd.mode === 'hangup') &&
    (amd.voicemailText === null || typeof amd.voicemailText === 'string') &&
    (amd.voicemailAudioUrl === null || typeof amd.voicemailAudioUrl === 'string')
  );
}

/** The context a stored value holds, or null when it is not bound to `expected.carrier` or expired. */
export function decodeContext(
  encoded: string | null,
  expected: { carrier: string; nowMs?: number },
): OutboundContext | null {
  if (encoded === null) return null;
  let value: unknown;
  try {
    value = JSON.parse(encoded);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const c = value as Record<string, unknown>;
  const nullableString = (v: unknown) => v === null || typeof v === 'string';
  if (
    !nullableString(c.attemptId) ||
    !nullableString(c.campaignId) ||
    !(c.contact === null || (typeof c.contact === 'number' && Number.isInteger(c.contact))) ||
    typeof c.profile !== 'string' ||
    !isRecordOfStrings(c.variables) ||
    !isAmd(c.amd) ||
    (c.recording !== undefined && !readRecordingSettings(c.recording).ok) ||
    c.carrier !== expected.carrier ||
    typeof c.expiresAtMs !== 'number' ||
    c.expiresAtMs <= (expected.nowMs ?? Date.now())
  ) {
    return null;
  }
  const { carrier: _carrier, expiresAtMs: _expiresAtMs, ...context } = c;
  return context as unknown as OutboundContext;
}

/** Outbound contexts kept in the shared store, handed out and read back by reference. */
export interface OutboundContexts {
  /** Keeps the context of a call about to be placed through `carrier`; resolves with its reference. */
  keep(context: OutboundContext, carrier: string): Promise<string>;
  /**
   * The context a reference names, or null when this server did not issue it for `carrier`, the
   * store no longer holds it, or it expired. Costs one store read, and none for a forged reference.
   */
  resolve(ref: unknown, carrier: string): Promise<OutboundContext | null>;
}

export function outboundContexts(
  secret: string,
  store: OutboundContextRecords,
  now: () => number = Date.now,
): OutboundContexts {
  return {
    async keep(context, carrier) {
      const encoded = encodeContext(context, { carrier, expiresAtMs: now() + OUTBOUND_CONTEXT_TTL_MS });
      const { id, ref } = issueContextRef(secret, carrier);
      await store.putOutboundContext(id, encoded, OUTBOUND_CONTEXT_TTL_MS);
      return ref;
    },
    async resolve(ref, carrier) {
      const id = contextIdOf(secret, ref, carrier);
      if (id === null) return null;
      return decodeContext(await store.getOutboundContext(id), { carrier, nowMs: now() });
    },
  };
}
