// The one place every long-lived /v1 stream registers with (event streams, listen-in): each is held
// under the credential that opened it, and every credential held is checked again twice a second,
// and at once when this instance ends a session or deletes a key. A stream whose credential no
// longer holds (its key deleted, its session signed out or ended, ADMIN_TOKEN rotated) is closed, on
// whichever instance it is open, within a second (docs/security.md, "Sessions and streams").
import type { Principal } from './principal.js';

/** How often the credentials of open streams are checked again. */
export const STREAM_RECHECK_MS = 500;

interface HeldStream {
  principal: Principal;
  close: () => void;
}

/** Whether the credential a principal proved itself with still holds. */
export type CredentialCheck = (principal: Principal) => Promise<boolean>;

/** One check per credential, however many streams it opened. */
export function credentialOf(principal: Principal): string {
  if (principal.via === 'cookie' && principal.session) return `session:${principal.session.id}`;
  return principal.keyId === null ? 'admin-token' : `key:${principal.keyId}`;
}

export class OpenStreams {
  readonly #held = new Set<HeldStream>();
  readonly #check: CredentialCheck;
  readonly #timer: NodeJS.Timeout;
  #sweeping: Promise<void> | null = null;
  #again = false;

  constructor(check: CredentialCheck, everyMs = STREAM_RECHECK_MS) {
    this.#check = check;
    this.#timer = setInterval(() => void this.sweep(), everyMs);
    this.#timer.unref();
  }

  get size(): number {
    return this.#held.size;
  }

  /** Holds a stream until the returned release is called; `close` ends it if its credential lapses. */
  hold(principal: Principal, close: () => void): () => void {
    const stream: HeldStream = { principal, close };
    this.#held.add(stream);
    return () => this.#held.delete(stream);
  }

  /**
   * Checks every held credential now and closes the streams of those that lapsed. A sweep asked for
   * while one runs runs again after it, so a revocation made meanwhile is never missed.
   */
  sweep(): Promise<void> {
    if (this.#sweeping) {
      this.#again = true;
      return this.#sweeping;
    }
    this.#sweeping = this.#sweepOnce().finally(() => {
      this.#sweeping = null;
      if (this.#again) {
        this.#again = false;
        void this.sweep();
      }
    });
    return this.#sweeping;
  }

  async #sweepOnce(): Promise<void> {
    if (this.#held.size === 0) return;
    const byCredential = new Map<string, HeldStream[]>();
    for (const stream of this.#held) {
      const credential = credentialOf(stream.principal);
      const streams = byCredential.get(credential);
      if (streams) streams.push(stream);
      else byCredential.set(credential, [stream]);
    }
    await Promise.all(
      [...byCredential.values()].map(async (streams) => {
        // A store that cannot answer right now closes nothing: the next sweep asks again.
        const holds = await this.#check(streams[0]!.principal).catch(() => true);
        if (holds) return;
        for (const stream of streams) {
          this.#held.delete(stream);
          try {
            stream.close();
          } catch {
            // A stream already torn down has nothing left to close.
          }
        }
      }),
    );
  }

  close(): void {
    clearInterval(this.#timer);
    for (const stream of this.#held) stream.close();
    this.#held.clear();
  }
}
