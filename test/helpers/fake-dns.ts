// A DNS server on a loopback UDP port that answers A queries from a table it can change, and
// NXDOMAIN for any other name: enough for nginx's `resolver`, as a cluster's DNS serves pods and
// Services. It records every name asked for.
import { createSocket, type RemoteInfo } from 'node:dgram';
import { once } from 'node:events';

const TYPE_A = 1;
const CLASS_IN = 1;
const TTL_S = 1;

export interface FakeDns {
  /** HOST:PORT, as nginx's `resolver` takes it. */
  address: string;
  /** Every name asked for, in order. */
  queries: string[];
  set(name: string, addresses: string[]): void;
  remove(name: string): void;
  close(): Promise<void>;
}

/** The question's name and where the question ends, or null for a message we do not read. */
function readQuestion(message: Buffer): { name: string; type: number; end: number } | null {
  if (message.length < 12 || message.readUInt16BE(4) !== 1) return null;
  const labels: string[] = [];
  let at = 12;
  while (at < message.length) {
    const length = message[at]!;
    if (length === 0) break;
    if (length > 63) return null; // compression never appears in a question we send
    labels.push(message.toString('ascii', at + 1, at + 1 + length));
    at += 1 + length;
  }
  if (at + 5 > message.length) return null;
  return { name: labels.join('.').toLowerCase(), type: message.readUInt16BE(at + 1), end: at + 5 };
}

function answer(query: Buffer, end: number, addresses: string[] | undefined, type: number): Buffer {
  const found = addresses !== undefined;
  const records = found && type === TYPE_A ? addresses : [];
  const header = Buffer.alloc(12);
  header.writeUInt16BE(query.readUInt16BE(0), 0);
  // QR, the query's opcode and RD, AA and RA; rcode 3 (NXDOMAIN) for a name we do not have.
  const flags = 0x8000 | (query.readUInt16BE(2) & 0x7900) | 0x0400 | 0x0080 | (found ? 0 : 3);
  header.writeUInt16BE(flags, 2);
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(records.length, 6);
  const answers = records.map((address) => {
    const record = Buffer.alloc(16);
    record.writeUInt16BE(0xc00c, 0); // the question's name
    record.writeUInt16BE(TYPE_A, 2);
    record.writeUInt16BE(CLASS_IN, 4);
    record.writeUInt32BE(TTL_S, 6);
    record.writeUInt16BE(4, 10);
    address.split('.').forEach((octet, i) => record.writeUInt8(Number(octet), 12 + i));
    return record;
  });
  return Buffer.concat([header, query.subarray(12, end), ...answers]);
}

export async function startFakeDns(): Promise<FakeDns> {
  const table = new Map<string, string[]>();
  const queries: string[] = [];
  const socket = createSocket('udp4');
  socket.on('message', (message: Buffer, from: RemoteInfo) => {
    const question = readQuestion(message);
    if (!question) return;
    queries.push(question.name);
    socket.send(
      answer(message, question.end, table.get(question.name), question.type),
      from.port,
      from.address,
    );
  });
  socket.bind(0, '127.0.0.1');
  await once(socket, 'listening');
  return {
    address: `127.0.0.1:${socket.address().port}`,
    queries,
    set: (name, addresses) => table.set(name.toLowerCase(), addresses),
    remove: (name) => table.delete(name.toLowerCase()),
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
