// Where a carrier opens a call's media stream: `/media/<carrier>/<instance>/<token>` under the
// public URL with its scheme turned into ws/wss (docs/architecture.md, "Call intake"). The
// instance segment lets a balancer send the stream back to the instance that answered the
// webhook; the token in the path reaches us through every carrier, query strings do not.

/** The public base URL as a WebSocket base: `https` → `wss`, `http` → `ws`. */
export function publicWsBase(publicUrl: string): string {
  return publicUrl.replace(/^http/, 'ws');
}

/** The route prefix of a carrier's media streams. */
export function mediaPath(carrier: string): string {
  return `/media/${carrier}`;
}

export function mediaUrl(publicUrl: string, carrier: string, instance: string, token: string): string {
  return `${publicWsBase(publicUrl)}${mediaPath(carrier)}/${instance}/${token}`;
}
