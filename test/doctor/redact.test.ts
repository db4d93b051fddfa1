import { describe, expect, it } from 'vitest';
import { redactLines } from '../../src/doctor/redact.js';
import { fail, ok } from '../../src/doctor/report.js';

describe('redactLines', () => {
  it('cuts every secret value out of what would be printed, whatever message carried it', () => {
    const env = {
      TWILIO_AUTH_TOKEN: 'supersecretvalue',
      WEBHOOK_SECRET_TASKS: 'old-secret-1, new-secret-2',
      REDIS_URL: 'redis://user:p%40ssword@127.0.0.1:6379',
      PORT: '8080',
    };
    const lines = redactLines(
      [
        fail('library said: token supersecretvalue refused'),
        ok('got old-secret-1 and new-secret-2 and p@ssword and p%40ssword on port 8080'),
      ],
      env,
    );
    expect(lines.map((line) => line.text)).toEqual([
      'library said: token [redacted] refused',
      'got [redacted] and [redacted] and [redacted] and [redacted] on port 8080',
    ]);
  });
});
