// The consoles of `callbridge bench console`: each follows GET /v1/calls/live/events as the browser
// console does, keeps its own view of the live calls, and times how long a call started by the
// stand-in peer took to reach it.
import type { LiveCall } from '../call/watch/live-call.js';

export interface Consoles {
  views: Array<Map<string, LiveCall>>;
  delaysMs: number[];
  close(): void;
}

/** Reads the server-sent events of one feed into `view` until aborted; resolves at the snapshot. */
function follow(
  body: AsyncIterable<Uint8Array>,
  view: Map<string, LiveCall>,
  onStarted: (callSid: string) => void,
): Promise<void> {
  return new Promise<void>((resolve) => {
    void (async () => {
      const decoder = new TextDecoder();
      let buffered = '';
      try {
        for await (const chunk of body) {
          buffered += decoder.decode(chunk, { stream: true });
          let end: number;
          while ((end = buffered.indexOf('\n\n')) >= 0) {
            const block = buffered.slice(0, end);
            buffered = buffered.slice(end + 2);
            const event = /^event: (.+)$/m.exec(block)?.[1];
            const data = /^data: (.+)$/m.exec(block)?.[1];
            if (!event || !data) continue;
            const parsed = JSON.parse(data) as { calls?: LiveCall[]; callSid: string };
            if (event === 'snapshot') {
              for (const call of parsed.calls ?? []) view.set(call.callSid, call);
              resolve();
            } else if (event === 'ended') {
              view.delete(parsed.callSid);
            } else {
              view.set(parsed.callSid, parsed as unknown as LiveCall);
              onStarted(parsed.callSid);
            }
          }
        }
      } catch {
        // Closed at the end of the window.
      }
    })();
  });
}

/** Opens `count` consoles on the server at `base`; resolves once every one has its snapshot. */
export async function openConsoles(
  base: string,
  token: string,
  count: number,
  startedAtMs: Map<string, number>,
): Promise<Consoles> {
  const controllers: AbortController[] = [];
  const views: Array<Map<string, LiveCall>> = [];
  const delaysMs: number[] = [];
  await Promise.all(
    Array.from({ length: count }, async () => {
      const controller = new AbortController();
      controllers.push(controller);
      const view = new Map<string, LiveCall>();
      views.push(view);
      const res = await fetch(`${base}/v1/calls/live/events`, {
        headers: { authorization: `Bearer ${token}` },
        signal: controller.signal,
      });
      await follow(res.body as AsyncIterable<Uint8Array>, view, (callSid) => {
        const at = startedAtMs.get(callSid);
        if (at !== undefined) delaysMs.push(Date.now() - at);
      });
    }),
  );
  return { views, delaysMs, close: () => controllers.forEach((c) => c.abort()) };
}
