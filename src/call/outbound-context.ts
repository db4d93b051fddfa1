// What an outbound call carries from the request that placed it to its session: the campaign
// attempt (or none, for a single call), the profile, the contact's variables and the answering-
// machine settings (docs/architecture.md section 5.2). It is sealed (signed, not secret) and rides
// through the carrier in the webhook URL or the carrier's client state, then in the stream token,
// so any instance that receives the call's webhooks can read it without a lookup.
//
// A sealed context is a capability, bound (docs/security.md): to the carrier it was placed through
// and to an expiry, besides its attempt; the core reads it only for a verified request, an attempt
// is finished only by a report about the attempt's own recorded call id, and request URLs are
// logged without their query, where contexts ride.
import { createHmac } from 'node:crypto';
import { constantTimeEqual } from '../auth.js';
import { readRecordingSettings, type RecordingSettings } from '../config/recording.js';

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

const VERSION = 'c1';
/** A sealed context rides in a URL: past this it is not one we issued. */
export const MAX_SEALED_CONTEXT_CHARS = 2048;
const SEALED = /^c1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

function sign(secret: string, body: string): string {
  return createHmac('sha256', `outbound-context:${secret}`).update(body).digest('base64url');
}

/**
 * How long a context placed now stays good: past a call's ringing, its longest conversation and the
 * carrier's last callback about it.
 */
export const OUTBOUND_CONTEXT_TTL_MS = 12 * 60 * 60_000;

/** What a sealed context is bound to besides its attempt. */
export interface ContextBinding {
  /** The carrier the call was placed through: no other carrier's request may present it. */
  carrier: string;
  expiresAtMs: number;
}

/** The context as a URL-safe string (`A-Z a-z 0-9 - _ .`); throws RangeError when it is too long. */
export function sealOutboundContext(
  secret: string,
  context: OutboundContext,
  binding: ContextBinding,
): string {
  const bound = { ...context, carrier: binding.carrier, expiresAtMs: binding.expiresAtMs };
  const body = Buffer.from(JSON.stringify(bound)).toString('base64url');
  const sealed = `${VERSION}.${body}.${sign(secret, `${VERSION}.${body}`)}`;
  if (sealed.length > MAX_SEALED_CONTEXT_CHARS) {
    throw new RangeError(
      `the call's context (variables and voicemail text) is too long: at most ${MAX_SEALED_CONTEXT_CHARS} characters once sealed`,
    );
  }
  return sealed;
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

/**
 * The context a sealed string holds, or null when it is not one this server's secret sealed for
 * `expected.carrier`, or it has expired.
 */
export function openOutboundContext(
  secret: string,
  sealed: unknown,
  expected: { carrier: string; nowMs?: number },
): OutboundContext | null {
  if (typeof sealed !== 'string' || sealed.length > MAX_SEALED_CONTEXT_CHARS || !SEALED.test(sealed)) {
    return null;
  }
  const [version, body, signature] = sealed.split('.') as [string, string, string];
  if (!constantTimeEqual(signature, sign(secret, `${version}.${body}`))) return null;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
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
