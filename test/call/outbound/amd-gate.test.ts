// The answering-machine gate on its own: what it holds, what each verdict releases or drops, and
// that every doubt resolves to a person (hanging up on a person is the costly error).
import { describe, expect, it } from 'vitest';
import { AmdGate, MAX_HELD_BYTES, type VerdictReport } from '../../../src/call/outbound/amd-gate.js';

const voicemail = {
  mode: 'voicemail' as const,
  voicemailText: 'Hi Ada, call us back.',
  voicemailAudioUrl: null,
};
const verdict = (v: VerdictReport['verdict'], messageEnded = false): VerdictReport => ({
  verdict: v,
  messageEnded,
  detectionMs: 1200,
  raw: v,
});

describe('the answering-machine gate', () => {
  it('holds the agent until a person is heard, then releases everything in order at once', () => {
    const gate = new AmdGate(voicemail);
    const played: string[] = [];
    gate.hold(() => played.push('started'));
    gate.hold(() => played.push('audio'), 160);
    expect(gate.holds).toBe(true);
    expect(played).toEqual([]);
    expect(gate.decide(verdict('human'))).toEqual({ kind: 'speak' });
    expect(played).toEqual(['started', 'audio']);
    expect(gate.holds).toBe(false);
    // A later verdict changes nothing.
    expect(gate.decide(verdict('machine', true))).toEqual({ kind: 'none' });
  });

  it('treats an unsure verdict, and no verdict in time, as a person', () => {
    const unsure = new AmdGate(voicemail);
    expect(unsure.decide(verdict('unknown'))).toEqual({ kind: 'speak' });
    const silent = new AmdGate(voicemail);
    expect(silent.timedOut()).toEqual({ kind: 'speak' });
    expect(silent.verdict?.raw).toBe('timeout');
  });

  it('drops what it held on a machine, waits for the end of the greeting, then leaves the message', () => {
    const gate = new AmdGate(voicemail);
    const played: string[] = [];
    gate.hold(() => played.push('greeting'), 160);
    expect(gate.decide(verdict('machine'))).toEqual({ kind: 'wait_for_message_end' });
    expect(gate.awaitingMessageEnd).toBe(true);
    // A doubt after a machine was heard changes nothing.
    expect(gate.decide(verdict('unknown'))).toEqual({ kind: 'none' });
    expect(gate.decide(verdict('machine', true))).toEqual({
      kind: 'leave_message',
      text: 'Hi Ada, call us back.',
      audioUrl: null,
    });
    expect(played).toEqual([]);
    // The agent's output stays held back until the reply that speaks the message starts.
    expect(gate.holds).toBe(true);
    expect(gate.messageStarted()).toBe(true);
    expect(gate.holds).toBe(false);
  });

  it("keeps the answerer's audio from the agent until a person is heard, and while a voicemail is left", () => {
    const person = new AmdGate(voicemail);
    expect(person.mutesAnswerer).toBe(true);
    person.decide(verdict('human'));
    expect(person.mutesAnswerer).toBe(false);
    const machine = new AmdGate(voicemail);
    machine.decide(verdict('machine', true));
    expect(machine.messageStarted()).toBe(true);
    // The message plays, yet a recorder's beep must not interrupt it.
    expect(machine.holds).toBe(false);
    expect(machine.mutesAnswerer).toBe(true);
  });

  it('hangs up on a fax, and on any machine in hang-up mode', () => {
    expect(new AmdGate(voicemail).decide(verdict('fax', true))).toEqual({ kind: 'hang_up' });
    const hangup = new AmdGate({ mode: 'hangup', voicemailText: null, voicemailAudioUrl: null });
    expect(hangup.decide(verdict('machine'))).toEqual({ kind: 'hang_up' });
  });

  it('holds a bounded amount and counts what it could not', () => {
    const gate = new AmdGate(voicemail);
    gate.hold(() => {}, MAX_HELD_BYTES);
    gate.hold(() => {}, 320);
    expect(gate.droppedBytes).toBe(320);
  });
});
