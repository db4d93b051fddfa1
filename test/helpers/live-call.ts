// A live Twilio call on a test server: the voice webhook answered, the media stream opened and
// started, the agent whatever the server was given. For the tests of live calls and their controls.
import { expect } from 'vitest';
import type { TestServer } from './server.js';
import {
  type CarrierStreamClient,
  localStreamUrl,
  newCallSid,
  openMediaStream,
  voiceWebhook,
} from './twilio-carrier.js';

export interface TwilioCall {
  callSid: string;
  stream: CarrierStreamClient;
}

/** Places the call on the server at `baseUrl` and starts its stream; it is live once the server admits it. */
export async function startTwilioCall(baseUrl: string): Promise<TwilioCall> {
  const callSid = newCallSid();
  const answer = await voiceWebhook(baseUrl, {
    CallSid: callSid,
    From: '+15005550006',
    To: '+15005550001',
  });
  const stream = await openMediaStream(localStreamUrl(baseUrl, answer.streamUrl), { callSid });
  stream.start(answer.parameters);
  return { callSid, stream };
}

/** Places the call and resolves once the server's registry holds it. */
export async function liveTwilioCall(server: TestServer): Promise<TwilioCall> {
  const call = await startTwilioCall(server.baseUrl);
  await expect.poll(() => server.app.callbridge.registry.has(call.callSid)).toBe(true);
  return call;
}
