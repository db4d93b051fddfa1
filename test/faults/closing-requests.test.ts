// A request that reaches an instance as it closes, on a keep-alive connection a balancer already
// holds, is served in full: nginx does not pass a 503 on to the next instance, and a carrier does not
// send a status callback again, so an answer of 503 there would lose the webhook (docs/deploy.md).
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type FakeAgent, startFakeAgent } from '../helpers/fake-agent.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { newCallSid } from '../helpers/twilio-carrier.js';

let agent: FakeAgent | undefined;
let server: TestServer | undefined;
let socket: Socket | undefined;

afterEach(async () => {
  socket?.destroy();
  await server?.close().catch(() => {});
  await agent?.close();
  server = agent = socket = undefined;
});

/** One HTTP/1.1 response read off the socket, whole (its length is given). */
function readResponse(sock: Socket): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (chunk: Buffer) => {
      text += chunk.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) return;
      const headers = text.slice(0, end);
      const length = Number(/content-length: *(\d+)/i.exec(headers)?.[1] ?? 0);
      if (text.length - end - 4 < length) return;
      sock.off('data', onData);
      resolve({
        status: Number(headers.split(' ')[1]),
        headers,
        body: text.slice(end + 4, end + 4 + length),
      });
    };
    sock.on('data', onData);
    sock.once('error', reject);
  });
}

const voiceRequest = (body: string) =>
  'POST /carriers/twilio/voice HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n' +
  `Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`;

const callBody = () =>
  new URLSearchParams({ CallSid: newCallSid(), From: '+15005550006', To: '+15005550001' }).toString();

describe('a request arriving as the instance closes', () => {
  it('is served on the keep-alive connection the balancer holds, not answered 503', async () => {
    agent = await startFakeAgent({ autoApply: true });
    server = await startServer({ AGENT_URL: agent.url, AGENT_API_KEY: 'closing-requests-agent-key' });
    const { port } = new URL(server.baseUrl);
    socket = connect(Number(port), '127.0.0.1');
    await new Promise((resolve) => socket!.once('connect', resolve));

    // The first webhook is in flight (its body half sent) when the instance starts to close.
    const first = callBody();
    const received = new Promise((resolve) => server!.app.server.once('request', resolve));
    socket.write(voiceRequest(first) + first.slice(0, 10));
    await received;
    const closed = server.app.close();
    await expect.poll(() => server!.app.server.listening).toBe(false);
    const firstAnswer = readResponse(socket);
    socket.write(first.slice(10));
    expect((await firstAnswer).status).toBe(200);

    // The next one comes on the same connection while the instance is still closing.
    const second = callBody();
    const secondAnswer = readResponse(socket);
    socket.write(voiceRequest(second) + second);
    const answer = await secondAnswer;
    expect(answer.status).toBe(200);
    expect(answer.body).toContain('<Connect><Stream');
    // It is the last on that connection, and the instance then finishes closing.
    expect(answer.headers).toMatch(/connection: close/i);
    await closed;
    server = undefined;
  });
});
