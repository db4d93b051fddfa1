// Call recordings over the admin API (docs/recordings.md), mounted inside the `/v1` admin scope:
//   GET    /calls/:callSid/recording         → 200/206 audio/wav (Range: one range), 404, 416; a live
//                                              call's only for operators (403 for a viewer); audited
//   DELETE /calls/:callSid/recording         → 204; 404 when there is none; a live call's recording
//                                              stops there (nothing more written, record `deleted`)
//   POST   /calls/:callSid/recording/pause   → 200 {"callSid", "instance", "recording": "paused"}
//   POST   /calls/:callSid/recording/resume  → 200 {"callSid", "instance", "recording": "recording"}
// Reads go to the store, which every instance shares; pause and resume reach the call wherever it
// runs, as a hang-up does (live-calls.ts).
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { LiveCalls, RecordingAction } from '../call/watch/live-call.js';
import { ForbiddenError, NotFoundError, UnavailableError } from '../errors.js';
import type { RecordingStore } from '../recording/store.js';
import { BYTES_PER_FRAME, headerSampleRate, WAV_HEADER_BYTES, wavHeader } from '../recording/wav-header.js';
import type { CallRecord } from '../store/call-record.js';
import { byteRange } from './byte-range.js';
import { ReadsAudited } from './reads-audited.js';
import { roleAllows } from './roles.js';
import { callSidOf, settle } from './live-calls.js';
import { routeSchema, typed } from './schemas.js';

export interface RecordingAdminDeps {
  recordings: RecordingStore;
  calls: LiveCalls;
  /** The call records, so a removed recording is marked so in its call's record. */
  records: {
    getCallRecord(callSid: string): Promise<CallRecord | null>;
    saveCallRecord(record: CallRecord): Promise<void>;
  };
}

/**
 * The stored file as served: whole frames of data only (a file cut short may end mid-frame) and a
 * header naming its sizes (a streamed header says 0xFFFFFFFF, and S3 parts cannot be rewritten).
 */
async function servedFile(store: RecordingStore, callSid: string): Promise<{ size: number; header: Buffer }> {
  const stored = await store.size(callSid);
  if (stored === null || stored < WAV_HEADER_BYTES)
    throw new NotFoundError(`no recording of call ${JSON.stringify(callSid)}`);
  const first = Buffer.concat(await (await store.read(callSid, 0, WAV_HEADER_BYTES - 1)).toArray());
  const rate = headerSampleRate(first);
  if (rate === null) throw new NotFoundError(`no playable recording of call ${JSON.stringify(callSid)}`);
  const dataBytes = Math.floor((stored - WAV_HEADER_BYTES) / BYTES_PER_FRAME) * BYTES_PER_FRAME;
  return { size: WAV_HEADER_BYTES + dataBytes, header: wavHeader(rate, dataBytes) };
}

/** Bytes `start` to `end` of the served file: the header from memory, the rest from the store. */
function servedBytes(
  store: RecordingStore,
  callSid: string,
  header: Buffer,
  start: number,
  end: number,
): Readable {
  return Readable.from(
    (async function* () {
      if (start < WAV_HEADER_BYTES) yield header.subarray(start, Math.min(end + 1, WAV_HEADER_BYTES));
      if (end >= WAV_HEADER_BYTES) yield* await store.read(callSid, Math.max(start, WAV_HEADER_BYTES), end);
    })(),
    { objectMode: false },
  );
}

export function registerRecordingAdminRoutes(scope: FastifyInstance, deps: RecordingAdminDeps): void {
  const { recordings: store } = deps;
  const reads = new ReadsAudited();
  /** Whether the call is live on any instance: its recording is then as good as listening in. */
  const isLive = async (callSid: string) => {
    try {
      return (await deps.calls.list()).some((call) => call.callSid === callSid);
    } catch {
      throw new UnavailableError('the live-call directory cannot be read right now; retry later');
    }
  };

  const api = typed(scope);
  api.get(
    '/calls/:callSid/recording',
    {
      config: { role: 'viewer' },
      schema: routeSchema(
        '/v1/calls/{callSid}/recording',
        'get',
        "A call's recording as audio/wav, with Range (a live call's: operators only)",
        404,
        416,
        503,
      ),
    },
    async (request, reply) => {
      const callSid = callSidOf(request.params.callSid);
      const live = await isLive(callSid);
      // Reading a live call's recording is listening to it, a few seconds behind: operators only.
      if (live && !roleAllows(request.principal!.role, 'operator')) {
        throw new ForbiddenError(
          "a live call's recording needs the operator role; a viewer may read it once the call has ended",
        );
      }
      const { size, header } = await servedFile(store, callSid);
      if (reads.due(request.principal!, callSid, live)) {
        await request.audit('recording.read', callSid, live ? { live: true } : undefined);
      }
      reply
        .header('content-type', 'audio/wav')
        .header('accept-ranges', 'bytes')
        .header('cache-control', 'private, no-store')
        .header('content-disposition', `inline; filename="${callSid}.wav"`);
      const range = byteRange(request.headers.range, size);
      if (range.kind === 'unsatisfiable') {
        return reply.code(416).header('content-range', `bytes */${size}`).send();
      }
      const [start, end] = range.kind === 'part' ? [range.start, range.end] : [0, size - 1];
      if (range.kind === 'part') reply.code(206).header('content-range', `bytes ${start}-${end}/${size}`);
      reply.header('content-length', end - start + 1);
      return reply.send(servedBytes(store, callSid, header, start, end));
    },
  );

  api.delete(
    '/calls/:callSid/recording',
    {
      config: { role: 'operator' },
      schema: routeSchema(
        '/v1/calls/{callSid}/recording',
        'delete',
        "Remove a call's recording from the store",
        404,
        503,
      ),
    },
    async (request, reply) => {
      const callSid = callSidOf(request.params.callSid);
      // A call under way stops recording first, wherever it runs: nothing is written after this,
      // its record will say `deleted`, and no `calls/recording.ready` is sent for it.
      const discarded = (await isLive(callSid)) && (await deps.calls.recording(callSid, 'discard')).ok;
      let removed: boolean;
      try {
        removed = await store.remove(callSid);
      } catch {
        throw new UnavailableError('the recording store cannot be reached right now; retry later');
      }
      if (!removed && !discarded) throw new NotFoundError(`no recording of call ${JSON.stringify(callSid)}`);
      const record = await deps.records.getCallRecord(callSid).catch(() => null);
      if (record?.recording) {
        await deps.records
          .saveCallRecord({ ...record, recording: { ...record.recording, state: 'deleted' } })
          .catch(() => {});
      }
      await request.audit('recording.delete', callSid);
      return reply.code(204).send();
    },
  );

  for (const action of ['pause', 'resume'] as const satisfies readonly RecordingAction[]) {
    api.post(
      `/calls/:callSid/recording/${action}`,
      {
        config: { role: 'operator' },
        schema: routeSchema(
          `/v1/calls/{callSid}/recording/${action}`,
          'post',
          `${action === 'pause' ? 'Pause' : 'Resume'} a live call's recording, wherever it runs`,
          404,
          409,
          503,
        ),
      },
      async (request) => {
        const callSid = callSidOf(request.params.callSid);
        const answer = {
          ...settle(callSid, await deps.calls.recording(callSid, action)),
          recording: action === 'pause' ? 'paused' : 'recording',
        };
        await request.audit(`recording.${action}`, callSid);
        return answer;
      },
    );
  }
}
