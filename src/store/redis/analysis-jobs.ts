// Analysis jobs in Redis, shared by every instance on one REDIS_URL. A sorted set orders the jobs
// by due time; claiming moves a job's due time to its lease end, so a job whose consumer died is
// due again when the lease lapses. Each step that reads and writes is one Lua script. The keys
// share one hash tag so the scripts stay valid on a cluster.
//
//   {analysis}:jobs      hash, callSid → the job input as JSON, with enqueuedAtMs
//   {analysis}:due       sorted set, member = callSid, score = due time (ms)
//   {analysis}:attempts  hash, callSid → attempts started
//   {analysis}:errors    hash, callSid → the last error
//   {analysis}:leases    hash, callSid → the current claim's token
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { AnalysisEnqueueResult, AnalysisJobInput, AnalysisJobs, Clock } from '../store.js';
import { redisScript } from './script.js';

const enqueue = redisScript(`
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return 'duplicate' end
if redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[3]) then return 'full' end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[3], ARGV[1], 0)
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1])
return 'queued'
`);

const claim = redisScript(`
local id = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[1], 'LIMIT', 0, 1)[1]
if not id then return nil end
local job = redis.call('HGET', KEYS[1], id)
if not job then
  redis.call('ZREM', KEYS[2], id)
  return nil
end
redis.call('ZADD', KEYS[2], ARGV[2], id)
local attempts = redis.call('HINCRBY', KEYS[3], id, 1)
redis.call('HSET', KEYS[5], id, ARGV[3])
return {job, attempts, redis.call('HGET', KEYS[4], id)}
`);

// Only the current claimant may put a job back; a job already completed stays gone.
const retryLater = redisScript(`
if redis.call('HGET', KEYS[3], ARGV[1]) ~= ARGV[2] then return 0 end
if redis.call('HEXISTS', KEYS[4], ARGV[1]) == 0 then return 0 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[4])
redis.call('HDEL', KEYS[3], ARGV[1])
return 1
`);

type StoredJob = AnalysisJobInput & { enqueuedAtMs: number };

export function redisAnalysisJobs(client: Redis, prefix: string, now: Clock): AnalysisJobs {
  const jobs = `${prefix}{analysis}:jobs`;
  const due = `${prefix}{analysis}:due`;
  const attempts = `${prefix}{analysis}:attempts`;
  const errors = `${prefix}{analysis}:errors`;
  const leases = `${prefix}{analysis}:leases`;

  return {
    async enqueueAnalysisJob(job, maxQueued) {
      const t = now();
      const stored: StoredJob = {
        callSid: job.callSid,
        language: job.language,
        text: job.text,
        truncated: job.truncated,
        enqueuedAtMs: t,
      };
      return (await enqueue(
        client,
        [jobs, due, attempts],
        [job.callSid, JSON.stringify(stored), maxQueued, t],
      )) as AnalysisEnqueueResult;
    },

    async claimAnalysisJob(_consumer, leaseMs) {
      const t = now();
      const token = randomUUID();
      const reply = (await claim(client, [jobs, due, attempts, errors, leases], [t, t + leaseMs, token])) as
        [string, number, string | null] | null;
      if (reply === null) return null;
      const stored = JSON.parse(reply[0]) as StoredJob;
      return {
        callSid: stored.callSid,
        language: stored.language,
        text: stored.text,
        truncated: stored.truncated,
        enqueuedAtMs: stored.enqueuedAtMs,
        attempts: Number(reply[1]),
        lastError: reply[2] ?? null,
        receipt: token,
      };
    },

    async completeAnalysisJob(job) {
      await client
        .multi()
        .hdel(jobs, job.callSid)
        .zrem(due, job.callSid)
        .hdel(attempts, job.callSid)
        .hdel(errors, job.callSid)
        .hdel(leases, job.callSid)
        .exec();
    },

    async retryAnalysisJobLater(job, delayMs, error) {
      await retryLater(
        client,
        [due, errors, leases, jobs],
        [job.callSid, job.receipt, now() + delayMs, error],
      );
    },

    async analysisJobCount() {
      return client.hlen(jobs);
    },
  };
}
