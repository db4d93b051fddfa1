// Reads a server-sent event stream with named events as it arrives.

export interface NamedEvent {
  event: string;
  data: Record<string, unknown>;
}

export interface EventReader {
  /** The events so far, in order. */
  events: NamedEvent[];
  /** Every event, once the server ends the stream. */
  done: Promise<NamedEvent[]>;
  /** Stops reading and closes the connection. */
  close(): void;
}

export async function readEvents(
  url: string,
  headers: Record<string, string>,
): Promise<EventReader & { status: number }> {
  const controller = new AbortController();
  const res = await fetch(url, { headers, signal: controller.signal });
  const events: NamedEvent[] = [];
  const done = (async () => {
    if (!res.body) return events;
    const decoder = new TextDecoder();
    let buffered = '';
    try {
      for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
        buffered += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buffered.indexOf('\n\n')) >= 0) {
          const block = buffered.slice(0, end);
          buffered = buffered.slice(end + 2);
          const name = /^event: (.+)$/m.exec(block)?.[1];
          const data = /^data: (.+)$/m.exec(block)?.[1];
          if (name && data) events.push({ event: name, data: JSON.parse(data) as Record<string, unknown> });
        }
      }
    } catch {
      // Closed by the test.
    }
    return events;
  })();
  return { status: res.status, events, done, close: () => controller.abort() };
}
