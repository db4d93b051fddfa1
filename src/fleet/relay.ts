// Pub/sub between the instances of a fleet (docs/architecture.md section 8): each instance listens
// on its own inbox for controls of the calls it carries and for releases of agents it pre-warmed,
// and answers requests on the asker's inbox; a call's events are published on the call's channel
// for observers connected to other instances.
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { CallEvent } from '../call/watch/events.js';
import type { RecordingAction } from '../call/watch/live-call.js';
import type { FleetKeys } from './keys.js';
import { type InboxMessage, parseInboxMessage, parseRelayedEvent } from './messages.js';

type Request = Extract<InboxMessage, { type: 'hangup' | 'transfer' | 'recording' }>;
export type RequestBody =
  | { type: 'hangup'; callSid: string }
  | { type: 'transfer'; callSid: string; target: string }
  | { type: 'recording'; callSid: string; action: RecordingAction };
export type Reply = Extract<InboxMessage, { type: 'reply' }>;

export interface RelayDeps {
  commands: Redis;
  subscriber: Redis;
  keys: FleetKeys;
  instance: string;
  logger: Logger;
  /** Acts on a message addressed to this instance; a request's answer goes back to its sender. */
  onMessage(message: Exclude<InboxMessage, { type: 'reply' }>): Promise<Omit<Reply, 'type' | 'id'> | null>;
}

/** How long an observer's feed waits for its subscription before opening anyway. */
const FOLLOW_WAIT_MS = 2_000;

/** Observers of one call here, fed by the call's channel. */
type EventListener = (event: CallEvent) => void;

export class FleetRelay {
  readonly #deps: RelayDeps;
  readonly #inbox: string;
  readonly #waiting = new Map<string, (reply: Reply) => void>();
  readonly #feeds = new Map<string, Set<EventListener>>();
  readonly #subscribed = new Map<string, Promise<void>>();

  constructor(deps: RelayDeps) {
    this.#deps = deps;
    this.#inbox = deps.keys.inbox(deps.instance);
  }

  async start(): Promise<void> {
    const { subscriber } = this.#deps;
    subscriber.on('message', (channel: string, text: string) => this.#received(channel, text));
    await subscriber.subscribe(this.#inbox);
  }

  /** Sends a control to `instance` and waits for its answer, up to `timeoutMs`. */
  async request(instance: string, body: RequestBody, timeoutMs: number): Promise<Reply | null> {
    const id = randomUUID();
    const answered = new Promise<Reply | null>((resolve) => {
      const timer = setTimeout(() => {
        this.#waiting.delete(id);
        resolve(null);
      }, timeoutMs);
      this.#waiting.set(id, (reply) => {
        clearTimeout(timer);
        this.#waiting.delete(id);
        resolve(reply);
      });
    });
    const message = { ...body, id, from: this.#deps.instance };
    const receivers = await this.#deps.commands
      .publish(this.#deps.keys.inbox(instance), JSON.stringify(message))
      .catch(() => 0);
    if (receivers === 0) {
      // Nobody listens on that inbox: the instance is gone.
      this.#waiting.get(id)?.({ type: 'reply', id, ok: false, reason: 'unreachable' });
    }
    return answered;
  }

  /** Tells `instance` something that needs no answer. */
  async tell(instance: string, message: Exclude<InboxMessage, Request | Reply>): Promise<void> {
    await this.#deps.commands.publish(this.#deps.keys.inbox(instance), JSON.stringify(message));
  }

  /** Publishes an event of a call carried here, for observers elsewhere. */
  publishEvent(callSid: string, event: CallEvent): void {
    const text = JSON.stringify({ origin: this.#deps.instance, event });
    this.#deps.commands.publish(this.#deps.keys.events(callSid), text).catch(() => {
      // Redis away: observers elsewhere miss this event; the call itself goes on.
    });
  }

  /** Follows the events of a call carried by another instance. */
  followEvents(callSid: string, listener: EventListener): () => void {
    const channel = this.#deps.keys.events(callSid);
    let set = this.#feeds.get(channel);
    if (!set) {
      set = new Set();
      this.#feeds.set(channel, set);
      const subscribed = this.#deps.subscriber.subscribe(channel).then(
        () => {},
        (err: Error) => {
          this.#deps.logger.warn(
            { err: err.message, callSid },
            'could not follow a call on another instance',
          );
        },
      );
      this.#subscribed.set(channel, subscribed);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size > 0 || this.#feeds.get(channel) !== set) return;
      this.#feeds.delete(channel);
      this.#subscribed.delete(channel);
      this.#deps.subscriber.unsubscribe(channel).catch(() => {});
    };
  }

  /**
   * Resolves once the subscription to the call's channel is in place, or after a short wait while
   * Redis is away (the feed then opens with this instance's own events only).
   */
  async following(callSid: string): Promise<void> {
    const subscribed = this.#subscribed.get(this.#deps.keys.events(callSid));
    if (!subscribed) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      subscribed,
      new Promise<void>((resolve) => (timer = setTimeout(resolve, FOLLOW_WAIT_MS))),
    ]);
    clearTimeout(timer);
  }

  get followed(): number {
    return this.#feeds.size;
  }

  #received(channel: string, text: string): void {
    if (channel === this.#inbox) {
      const message = parseInboxMessage(text);
      if (!message) {
        this.#deps.logger.warn({ channel }, 'dropped a malformed fleet message');
        return;
      }
      if (message.type === 'reply') {
        this.#waiting.get(message.id)?.(message);
        return;
      }
      void this.#answer(message);
      return;
    }
    const listeners = this.#feeds.get(channel);
    if (!listeners) return;
    const relayed = parseRelayedEvent(text);
    if (!relayed || relayed.origin === this.#deps.instance) return;
    for (const listener of listeners) listener(relayed.event);
  }

  async #answer(message: Exclude<InboxMessage, { type: 'reply' }>): Promise<void> {
    let reply: Omit<Reply, 'type' | 'id'> | null;
    try {
      reply = await this.#deps.onMessage(message);
    } catch (err) {
      reply = { ok: false, reason: 'refused', message: (err as Error).message };
    }
    if (reply === null || message.type === 'release_prewarm' || message.type === 'listen') return;
    const answer: Reply = { type: 'reply', id: message.id, ...reply };
    await this.#deps.commands
      .publish(this.#deps.keys.inbox(message.from), JSON.stringify(answer))
      .catch((err: Error) =>
        this.#deps.logger.warn({ err: err.message }, 'could not answer a fleet control'),
      );
  }

  close(): void {
    for (const resolve of [...this.#waiting.values()])
      resolve({ type: 'reply', id: '', ok: false, reason: 'unreachable' });
    this.#waiting.clear();
    this.#feeds.clear();
  }
}
