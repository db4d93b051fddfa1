// Admission of agent sockets at the upgrade: the scenario's scripted refusals, then the concurrent
// connection limit. Both answer HTTP 429 by default, as the real service does when too many sockets
// are open at once (docs/protocols/agent.md section 12: the limit counts open connections, not requests).

export interface HandshakeGateOptions {
  maxConnections?: number;
  refuse?: { status: number; times?: number };
}

export type Admission =
  { ok: true; release: () => void } | { ok: false; status: number; description: string };

export class HandshakeGate {
  readonly #max: number;
  readonly #refuse: { status: number; times?: number } | undefined;
  #refused = 0;
  #active = 0;

  constructor(opts: HandshakeGateOptions = {}) {
    this.#max = opts.maxConnections ?? Number.POSITIVE_INFINITY;
    this.#refuse = opts.refuse;
  }

  /** Sockets admitted and not yet released (a slot is held from admission, before the upgrade ends). */
  get active(): number {
    return this.#active;
  }

  admit(): Admission {
    const refuse = this.#refuse;
    if (refuse && (refuse.times === undefined || this.#refused < refuse.times)) {
      this.#refused++;
      return { ok: false, status: refuse.status, description: 'handshake refused by the scenario' };
    }
    if (this.#active >= this.#max) {
      return { ok: false, status: 429, description: `too many concurrent connections (limit ${this.#max})` };
    }
    this.#active++;
    let released = false;
    return {
      ok: true,
      release: () => {
        if (released) return;
        released = true;
        this.#active--;
      },
    };
  }
}
