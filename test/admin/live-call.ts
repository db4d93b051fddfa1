// A live Twilio call on a test server: the voice webhook answered, the media stream opened and
// started, the agent a fake one. For the tests of controls on live calls.
import { expect } from 'vitest';
import type { TestServer } from '../helpers/server.js';
import {
  type CarrierStreamClient,
  localStreamUrl,
  newCallSid,
  openMediaStream,
  voiceWebhook,
} from '../helpers/twilio-carrier.js';

export async function liveTwilioCall(
  server: TestServer,
): Promise<{ callSid: string; stream: CarrierStreamClient }> {
  const callSid = newCallSid();
  const answer = await voiceWebhook(server.baseUrl, {
    CallSid: callSid,
    From: '+15005550006',
    To: '+15005550001',
  });
  const stream = await openMediaStream(localStreamUrl(server.baseUrl, answer.streamUrl), { callSid });
  stream.start(answer.parameters);
  await expect.poll(() => server.app.callbridge.registry.has(callSid)).toBe(true);
  return { callSid, stream };
}
