// How the simulated carriers read what the server sends on a JSON media stream: a JSON object per
// text frame, or a warning in the words the call summary prints (the carrier would ignore the frame).

export type ServerJson = { ok: true; message: Record<string, unknown> } | { ok: false; warning: string };

export function readServerJson(data: Buffer, isBinary: boolean, carrier: string): ServerJson {
  if (isBinary)
    return { ok: false, warning: `server sent a binary frame; ${carrier} reads only JSON text frames` };
  try {
    const message: unknown = JSON.parse(data.toString('utf8'));
    if (typeof message === 'object' && message !== null && !Array.isArray(message))
      return { ok: true, message: message as Record<string, unknown> };
  } catch {
    // Not JSON: the same warning as JSON that is not an object.
  }
  return { ok: false, warning: 'server sent a frame that is not a JSON object; ignored' };
}

/** `mark.name` of a Twilio-style mark frame, when it is a string. */
export function markName(message: Record<string, unknown>): string | undefined {
  const name = (message.mark as { name?: unknown } | undefined)?.name;
  return typeof name === 'string' ? name : undefined;
}

export function unknownEventWarning(event: unknown): string {
  return `server sent unknown event ${JSON.stringify(event)}; ignored`;
}
