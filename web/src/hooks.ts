// Small hooks the screens share: a request's state, and a server-sent event stream's.
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { describe } from './api.js';

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

/**
 * Follows a server-sent event stream while the component lives; `handlers` maps event names to
 * handlers of their parsed JSON data. `url` null means no stream.
 */
export function useEventStream(
  url: string | null,
  handlers: Record<string, (data: unknown) => void>,
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
