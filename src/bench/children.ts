// The processes of one bench run, so that every one of them is killed at the end and on any error.
// Forked children talk over IPC (ipc.ts); the server is spawned as deployed, with no channel.
import { type ChildProcess, fork, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import type { FromChild, ToChild } from './ipc.js';

/** Output kept per process for error messages. */
const TAIL_CHARS = 4000;
/** SIGTERM first: the server drains and a CPU profile gets written; then SIGKILL. */
const STOP_GRACE_MS = 15_000;

type Message<T extends FromChild['type']> = Extract<FromChild, { type: T }>;

interface Waiter {
  type: FromChild['type'];
  resolve(message: FromChild): void;
  reject(err: Error): void;
}

export class BenchChild {
  readonly exited: Promise<void>;
  #tail = '';
  #waiters: Waiter[] = [];
  #failure: Error | null = null;

  constructor(
    readonly name: string,
    readonly child: ChildProcess,
  ) {
    const keep = (chunk: Buffer) => {
      this.#tail = (this.#tail + chunk.toString('utf8')).slice(-TAIL_CHARS);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    child.on('message', (raw) => this.#onMessage(raw as FromChild));
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.#fail(new Error(`${name} exited (${signal ?? `code ${code}`})${this.#tailNote()}`));
        resolve();
      });
    });
    child.once('error', (err) => this.#fail(new Error(`${name} could not run: ${err.message}`)));
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** What the process wrote last (stdout and stderr), for error messages. */
  get output(): string {
    return this.#tail;
  }

  send(message: ToChild): void {
    this.child.send?.(message);
  }

  /** The next message of `type`; rejects on the child's `error` message, its exit, or the timeout. */
  waitFor<T extends FromChild['type']>(type: T, timeoutMs: number): Promise<Message<T>> {
    if (this.#failure) return Promise.reject(this.#failure);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiters = this.#waiters.filter((w) => w !== waiter);
        reject(new Error(`${this.name}: no ${type} message within ${timeoutMs} ms${this.#tailNote()}`));
      }, timeoutMs);
      const waiter: Waiter = {
        type,
        resolve: (message) => {
          clearTimeout(timer);
          resolve(message as Message<T>);
        },
        reject: (err) => {
          clearTimeout(timer);
          reject(err);
        },
      };
      this.#waiters.push(waiter);
    });
  }

  request<T extends FromChild['type']>(message: ToChild, type: T, timeoutMs: number): Promise<Message<T>> {
    const answer = this.waitFor(type, timeoutMs);
    this.send(message);
    return answer;
  }

  /** SIGTERM, then SIGKILL if it has not exited within the grace period. */
  async stop(graceMs = STOP_GRACE_MS): Promise<void> {
    if (!this.running) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.kill(), graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  kill(): void {
    if (this.running) this.child.kill('SIGKILL');
  }

  #onMessage(message: FromChild): void {
    if (message.type === 'error') {
      this.#fail(new Error(`${this.name} failed: ${message.message}`));
      return;
    }
    const index = this.#waiters.findIndex((w) => w.type === message.type);
    if (index < 0) return;
    const [waiter] = this.#waiters.splice(index, 1);
    waiter!.resolve(message);
  }

  #fail(err: Error): void {
    this.#failure ??= err;
    for (const waiter of this.#waiters.splice(0)) waiter.reject(err);
  }

  #tailNote(): string {
    const tail = this.#tail.trim();
    return tail === '' ? '' : `; its last output:\n${tail}`;
  }
}

/** Every process started for one run; `killAll` is safe to call at any time, more than once. */
export class ChildSet {
  readonly #children = new Set<BenchChild>();

  /** A bench entry point (dist/bench/*.js) with an IPC channel; `extra` adds node flags and variables. */
  fork(
    name: string,
    entry: string,
    args: string[] = [],
    extra: { execArgv?: string[]; env?: Record<string, string> } = {},
  ): BenchChild {
    // execArgv: only what is asked, so that flags the bench itself runs under (a test runner's loaders) stay out.
    const child = fork(entry, args, {
      execArgv: extra.execArgv ?? [],
      ...(extra.env ? { env: { ...process.env, ...extra.env } } : {}),
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    return this.#track(new BenchChild(name, child));
  }

  spawn(
    name: string,
    command: string,
    args: string[],
    opts: { cwd: string; env: NodeJS.ProcessEnv },
  ): BenchChild {
    const child = spawn(command, args, {
      ...opts,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return this.#track(new BenchChild(name, child));
  }

  killAll(): void {
    for (const child of this.#children) child.kill();
  }

  /**
   * Until the returned release is called, this process exiting, or a SIGINT or SIGTERM to it,
   * kills every child first (forked children also exit by themselves when their channel closes).
   */
  guard(cleanup: () => void): () => void {
    const onExit = () => {
      this.killAll();
      cleanup();
    };
    const onSignal = (signal: NodeJS.Signals) => {
      release();
      onExit();
      // The signal's own outcome, now that nothing is left behind.
      process.kill(process.pid, signal);
    };
    const release = () => {
      process.off('exit', onExit);
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    };
    process.on('exit', onExit);
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    return release;
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.#children].map((child) => child.stop()));
  }

  #track(child: BenchChild): BenchChild {
    this.#children.add(child);
    void child.exited.then(() => this.#children.delete(child));
    return child;
  }
}

/** A loopback port nothing listens on right now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
