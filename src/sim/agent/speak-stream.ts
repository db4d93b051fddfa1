// WebSocket /v2/speak, the streaming turn-aware text-to-speech path (docs/protocols/speech-service.md sections 7, 9 and 10):
//   - query: `model` (required, `turn-*`), `encoding` (`linear16` default, `mulaw`, `alaw`), `speed`
//     (0.5 to 1.5 in steps of 0.05), `expressivity` (-2 to 2); anything else, batch-only parameters
//     included, fails the connection (the upgrade is refused with 400);
//   - `Speak` starts a turn (`SpeechStarted`, with a server-assigned `speech_id`) and its audio
//     streams at once; `Flush` ends the turn (`Flushed`, then `SpeechMetadata` once all audio is
//     sent); `Interrupt` ends it with `SpeechInterrupted`; `Configure` changes the speed only;
//   - markup in text is stripped, with a `Warning` `INPUT_MARKUP_STRIPPED`.
import { randomUUID } from 'node:crypto';
import { type RawData, WebSocket } from 'ws';
import { checkModel, type Refusal, speakFormat, speedProblem } from './speak.js';
import type { PhraseBook } from './phrases.js';
import { codedError } from './http-replies.js';
import { readQuery } from './request-body.js';

const STREAM_QUERY = ['model', 'encoding', 'speed', 'expressivity'];
const STREAM_ENCODINGS = ['linear16', 'mulaw', 'alaw'] as const;
/** Characters one turn may hold before the stream refuses more. */
const MAX_TURN_CHARS = 10_000;
/** Messages waiting to be handled on one connection before it stops reading more. */
const MAX_WAITING_MESSAGES = 16;

export interface StreamOptions {
  model: string;
  encoding: (typeof STREAM_ENCODINGS)[number];
  speed: number;
}

/** The connection's parameters, or why it fails (7: the connection fails). */
export function checkStreamQuery(
  search: URLSearchParams,
): { ok: true; options: StreamOptions } | ({ ok: false } & Refusal) {
  const refuse = (message: string) => ({
    ok: false as const,
    status: 400,
    body: codedError('INVALID_QUERY_PARAMETER', message),
  });
  const query = readQuery(search, STREAM_QUERY);
  if (!query.ok)
    return refuse(`${query.problem}: the streaming path takes model, encoding, speed and expressivity only`);
  const model = checkModel('v2', query.values.get('model'));
  if (typeof model !== 'string') return model;
  const encoding = query.values.get('encoding') ?? 'linear16';
  if (!(STREAM_ENCODINGS as readonly string[]).includes(encoding)) {
    return refuse(
      `encoding must be linear16, mulaw or alaw on the streaming path, got ${JSON.stringify(encoding.slice(0, 20))}`,
    );
  }
  const speedText = query.values.get('speed');
  let speed = 1;
  if (speedText !== undefined) {
    const problem = speedProblem('v2', model, speedText);
    if (problem !== null) return refuse(`speed ${problem}`);
    speed = Number(speedText);
  }
  const expressivity = query.values.get('expressivity');
  if (
    expressivity !== undefined &&
    !(/^-?\d+(\.\d+)?$/.test(expressivity) && Math.abs(Number(expressivity)) <= 2)
  ) {
    return refuse('expressivity must be a number from -2 to 2');
  }
  return { ok: true, options: { model, encoding: encoding as StreamOptions['encoding'], speed } };
}

/** One streaming speak connection. */
export function serveSpeakStream(ws: WebSocket, options: StreamOptions, phrases: PhraseBook): void {
  const format = speakFormat(options.encoding);
  let turn: { id: string; text: string; audioBytes: number } | null = null;
  const send = (message: Record<string, unknown>) => {
    if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(message));
  };
  const warn = (code: string, description: string) => send({ type: 'Warning', code, description });

  // Messages are handled one at a time, in order: a Speak's audio (synthesised off the event loop)
  // goes out before whatever follows it. Past a few waiting, the socket stops reading, so a fast
  // client meets backpressure rather than an ever-longer queue.
  let handling: Promise<void> = Promise.resolve();
  let waiting = 0;
  ws.on('message', (data: RawData, isBinary: boolean) => {
    if (++waiting >= MAX_WAITING_MESSAGES) ws.pause();
    handling = handling
      .then(() => handle(data, isBinary))
      .catch(() => {
        if (ws.readyState === WebSocket.OPEN) ws.close(1011, 'speech synthesis failed');
      })
      .finally(() => {
        if (--waiting < MAX_WAITING_MESSAGES && ws.isPaused) ws.resume();
      });
  });

  const handle = async (data: RawData, isBinary: boolean): Promise<void> => {
    if (isBinary) return warn('UNEXPECTED_BINARY', 'the speak stream takes JSON messages only');
    let message: Record<string, unknown>;
    try {
      const parsed: unknown = JSON.parse(String(data));
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
        throw new Error('not an object');
      message = parsed as Record<string, unknown>;
    } catch {
      return warn('UNPARSABLE_MESSAGE', 'a message must be a JSON object with a type');
    }
    switch (message.type) {
      case 'Speak': {
        if (typeof message.text !== 'string' || message.text === '')
          return warn('INVALID_MESSAGE', 'Speak needs text');
        const clean = message.text.replace(/<[^>]*>/g, '');
        if (!turn) {
          turn = { id: randomUUID(), text: '', audioBytes: 0 };
          send({ type: 'SpeechStarted', speech_id: turn.id });
        }
        if (clean !== message.text) warn('INPUT_MARKUP_STRIPPED', 'markup was removed from the text');
        if (turn.text.length + clean.length > MAX_TURN_CHARS) {
          return warn('TEXT_TOO_LONG', `a turn holds at most ${MAX_TURN_CHARS} characters; flush first`);
        }
        // Successive texts are concatenated verbatim (4.4): the client adds the spaces.
        turn.text += clean;
        if (clean.trim() === '') return;
        const audio = phrases.render(await phrases.speak(clean), format);
        turn.audioBytes += audio.length;
        if (ws.readyState === WebSocket.OPEN) ws.send(audio, { binary: true });
        return;
      }
      case 'Flush': {
        if (!turn) return;
        const ended = turn;
        turn = null;
        send({ type: 'Flushed', speech_id: ended.id });
        // All audio of the turn is already sent: SpeechMetadata is the end-of-turn signal.
        send({
          type: 'SpeechMetadata',
          speech_id: ended.id,
          characters: ended.text.length,
          audio_duration_ms: Math.round(
            (ended.audioBytes / (format.encoding === 'linear16' ? 2 : 1) / format.sampleRate) * 1000,
          ),
        });
        return;
      }
      case 'Interrupt': {
        if (!turn) return;
        const ended = turn;
        turn = null;
        send({ type: 'SpeechInterrupted', speech_id: ended.id, text_spoken: ended.text, text_remaining: '' });
        return;
      }
      case 'Configure': {
        const speed = message.speed;
        const extra = Object.keys(message).filter((key) => key !== 'type' && key !== 'speed');
        if (extra.length > 0 || speed === undefined)
          return warn('INVALID_CONFIGURE', 'Configure changes speed only');
        const problem = speedProblem('v2', options.model, String(speed));
        if (problem !== null) return warn('INVALID_CONFIGURE', `speed ${problem}`);
        options.speed = Number(speed);
        return;
      }
      default:
        return warn('UNKNOWN_MESSAGE_TYPE', `unknown message type ${String(message.type).slice(0, 40)}`);
    }
  };
}
