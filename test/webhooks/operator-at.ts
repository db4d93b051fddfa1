// Binds the fake operator gateway to a port chosen before it exists, so a server can be pointed at
// it while it is still down.
import { createServer, type Server } from 'node:http';

export interface FixedPortGateway {
  received: { key: string; name: string }[];
  close(): Promise<void>;
}

export async function operatorGatewayAt(port: number): Promise<FixedPortGateway> {
  const received: { key: string; name: string }[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { name: string };
      received.push({ key: String(req.headers['idempotency-key']), name: body.name });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    received,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
