// The server's observer feed for one call: `GET /calls/:callSid/events` as Server-Sent Events, each
// `data:` a JSON object (transcript, barge-in, function, end). It is optional: a refused or absent
// feed leaves the call as it is, only without transcripts.
import { createSseParser } from './sse.js';

export type ObserverMessage =
  | { type: 'transcript'; role: 'user' | 'assistant'; content: string; interrupted: boolean }
  | { type: 'barge-in' }
  | { type: 'function'; name: string; outcome: string }
  | { type: 'end'; reason: string };

export interface ObserverFeedOptions {
  url: string;
  token: string;
  onMessage(message: ObserverMessage): void;
  onWarning(message: string): void;
  connectTimeoutMs?: number;
}

export interface ObserverFeed {
  /** Resolves once the feed has delivered `end`, closed, or `timeoutMs` passed. */
  waitForEnd(timeoutMs: number): Promise<void>;
  close(): void;
}

export function openObserverFeed(opts: ObserverFeedOptions): ObserverFeed {
  const abort = new AbortController();
  let finish: () => void = () => {};
  const finished = new Promise<void>((resolve) => {
    finish = resolve;
  });

  const deliver = (data: string): void => {
    const message = readMessage(data);
    if (message === undefined) return;
    opts.onMessage(message);
    if (message.type === 'end') finish();
  };

  const run = async (): Promise<void> => {
    const connectTimer = setTimeout(() => abort.abort(), opts.connectTimeoutMs ?? 5000);
    let response: Response;
    try {
      response = await fetch(opts.url, {
        headers: { authorization: `Bearer ${opts.token}`, accept: 'text/event-stream' },
        signal: abort.signal,
      });
    } finally {
      clearTimeout(connectTimer);
    }
    if (response.status === 401 || response.status === 404) {
      // The server has no feed for us: carry on without one.
      await response.body?.cancel();
      return;
    }
    const type = response.headers.get('content-type') ?? '';
    if (!response.ok || !type.startsWith('text/event-stream') || response.body === null) {
      opts.onWarning(
        `observer feed answered HTTP ${response.status} (${type || 'no content-type'}); ignored`,
      );
      await response.body?.cancel();
      return;
    }
    const parser = createSseParser(deliver);
    const decoder = new TextDecoder();
    for await (const chunk of response.body) {
      parser.push(decoder.decode(chunk, { stream: true }));
    }
  };

  run()
    .catch((err: unknown) => {
      if (!abort.signal.aborted) opts.onWarning(`observer feed failed: ${(err as Error).message}`);
    })
    .finally(finish);

  return {
    async waitForEnd(timeoutMs: number): Promise<void> {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
      });
      await Promise.race([finished, timeout]);
      clearTimeout(timer);
    },
    close(): void {
      abort.abort();
    },
  };
}

function readMessage(data: string): ObserverMessage | undefined {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const m = value as Record<string, unknown>;
  const text = (key: string): string => (typeof m[key] === 'string' ? (m[key] as string) : '');
  switch (m.type) {
    case 'transcript':
      return {
        type: 'transcript',
        role: m.role === 'user' ? 'user' : 'assistant',
        content: text('content'),
        interrupted: m.interrupted === true,
      };
    case 'barge-in':
      return { type: 'barge-in' };
    case 'function':
      return {
        type: 'function',
        name: text('name'),
        outcome: typeof m.outcome === 'string' ? m.outcome : JSON.stringify(m.outcome ?? null),
      };
    case 'end':
      return { type: 'end', reason: text('reason') };
    default:
      // Types added to the feed later are not ours to show.
      return undefined;
  }
}
