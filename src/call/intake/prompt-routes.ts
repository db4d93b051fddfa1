// The fixed prompts as recordings a carrier can fetch and play: `GET /prompts/at_capacity.wav`,
// the decline a caller hears when the server cannot take the call, rendered in the voice of
// config/prompts.json (μ-law 8 kHz WAV, which every carrier's player takes). A carrier that can
// play a URL answers a declined call with it (intake.ts `decline.audioUrl`); the others speak the
// decline's text. Unauthenticated, as a carrier fetches it: it is the same words every caller hears.
import type { FastifyInstance } from 'fastify';
import { MULAW_8K } from '../../audio/format.js';
import { writeWavMulaw } from '../../audio/wav-writer.js';
import type { PromptPlayer } from '../session/fallback-audio.js';

export const DECLINE_AUDIO_PATH = '/prompts/at_capacity.wav';

export function promptRoutes(prompts: PromptPlayer) {
  return async (app: FastifyInstance): Promise<void> => {
    app.get(DECLINE_AUDIO_PATH, async (_req, reply) => {
      const audio = await prompts('at_capacity', MULAW_8K);
      if (!audio)
        return reply.code(404).send({ error: { code: 'CALLBRIDGE_NOT_FOUND', message: 'no recording' } });
      return reply
        .header('content-type', 'audio/wav')
        .header('cache-control', 'public, max-age=300')
        .send(writeWavMulaw(audio));
    });
  };
}
