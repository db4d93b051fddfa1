// JSON answers of the local agent's HTTP side, for plain requests and for refused upgrades. The
// error envelope is ours (docs/protocols/speech-service.md section 9: the body of an HTTP error is not described).
import type { ServerResponse } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';

export interface ErrorBody {
  err_code: string;
  err_msg: string;
}

export function errorBody(status: number, message: string): ErrorBody {
  return { err_code: (STATUS_CODES[status] ?? 'ERROR').toUpperCase().replace(/\W+/g, '_'), err_msg: message };
}

/** An error the spec names by code (speech-service.md section 9: `INVALID_QUERY_PARAMETER`, `PAYLOAD_ERROR`, …). */
export function codedError(code: string, message: string): ErrorBody {
  return { err_code: code, err_msg: message };
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

export function sendAudio(res: ServerResponse, contentType: string, audio: Buffer): void {
  res.writeHead(200, { 'content-type': contentType, 'content-length': audio.length });
  res.end(audio);
}

/** Answers an upgrade request with an HTTP error instead of switching protocols, then closes. */
export function refuseUpgrade(socket: Duplex, status: number, message: string | ErrorBody): void {
  if (socket.destroyed) return;
  const text = JSON.stringify(typeof message === 'string' ? errorBody(status, message) : message);
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\n` +
      'Connection: close\r\n' +
      'Content-Type: application/json\r\n' +
      `Content-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`,
  );
}
