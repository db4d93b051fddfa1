// Small hooks the screens share: a request's state, and a server-sent event stream's.
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import type { Static, TSchema } from '@sinclair/typebox';
import type { Operations } from '../../src/api/index.js';
import { describe, url } from './api.js';

export interface Loaded<T> {
  data: T | undefined;
  error: string | null;
  loading: boolean;
  reload: () => void;
  set: (data: T) => void;
}

/** The answer of `load`, fetched again whenever `key` changes; a late answer for an old key is dropped. */
export function useLoad<T>(load: () => Promise<T>, key: string): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [round, setRound] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;
  useEffect(() => {
    let current = true;
    setLoading(true);
    loadRef.current().then(
      (value) => {
        if (!current) return;
        setData(value);
        setError(null);
        setLoading(false);
      },
      (err: unknown) => {
        if (!current) return;
        setError(describe(err));
        setLoading(false);
      },
    );
    return () => {
      current = false;
    };
  }, [key, round]);
  const reload = useCallback(() => setRound((n) => n + 1), []);
  return { data, error, loading, reload, set: setData };
}

export type StreamState = 'connecting' | 'live' | 'reconnecting';

/** EventSource retries by itself after a dropped connection, but gives up on an HTTP error: retry then too. */
const REOPEN_AFTER_MS = 3_000;

/** The paths of the contract that serve a server-sent event stream, and the events of each. */
type FeedPath = {
  [P in keyof Operations]: Operations[P] extends { get: { feed: Record<string, TSchema> } } ? P : never;
}[keyof Operations];
type Feed<P extends FeedPath> = Operations[P] extends { get: { feed: infer F } } ? F : never;
export type FeedHandlers<P extends FeedPath> = {
  [Name in keyof Feed<P>]?: Feed<P>[Name] extends TSchema ? (data: Static<Feed<P>[Name]>) => void : never;
};

/**
 * Follows the server-sent event stream of `path` while the component lives; `handlers` maps the
 * contract's event names to handlers of their data. `path` null means no stream.
 */
export function useEventStream<P extends FeedPath>(
  path: P | null,
  params: Record<string, string>,
  handlers: FeedHandlers<P>,
): StreamState {
  const address = path === null ? null : url(path, { params });
  return useEventSource(address, handlers as Record<string, ((data: unknown) => void) | undefined>);
}

function useEventSource(
  url: string | null,
  handlers: Record<string, ((data: unknown) => void) | undefined>,
): StreamState {
  const [state, setState] = useState<StreamState>('connecting');
  const handlersRef = useRef(handlers);
  handlersRef.current = handlers;
  useEffect(() => {
    if (url === null) return;
    let source: EventSource | null = null;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let closed = false;
    const open = () => {
      source = new EventSource(url);
      source.onopen = () => setState('live');
      source.onerror = () => {
        setState('reconnecting');
        if (source?.readyState === EventSource.CLOSED && !closed) timer = setTimeout(open, REOPEN_AFTER_MS);
      };
      for (const name of Object.keys(handlersRef.current)) {
        source.addEventListener(name, (event) => {
          const data = safeParse((event as MessageEvent<string>).data);
          if (data !== undefined) handlersRef.current[name]?.(data);
        });
      }
    };
    open();
    return () => {
      closed = true;
      clearTimeout(timer);
      source?.close();
    };
  }, [url]);
  return state;
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Re-renders every `ms` milliseconds, for clocks such as a live call's running time. */
export function useTick(ms: number): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(timer);
  }, [ms]);
  return now;
}
