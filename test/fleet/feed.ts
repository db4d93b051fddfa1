// Reads a call's observer feed (Server-Sent Events) as it arrives.

export interface Feed {
  /** The `data:` events so far. */
  events: Array<Record<string, unknown>>;
  /** Every event, once the feed closes (after the `end` event). */
  done: Promise<Array<Record<string, unknown>>>;
}

export function readFeed(res: Response): Feed {
  const events: Array<Record<string, unknown>> = [];
  const done = (async () => {
    const decoder = new TextDecoder();
    let buffered = '';
    for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
      buffered += decoder.decode(chunk, { stream: true });
      let end: number;
      while ((end = buffered.indexOf('\n\n')) >= 0) {
        const block = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        if (block.startsWith('data: ')) events.push(JSON.parse(block.slice(6)) as Record<string, unknown>);
      }
    }
    return events;
  })();
  return { events, done };
}
