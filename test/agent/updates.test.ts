// Agent updates asked for by a function's answer (src/agent/updates.ts): what is honoured, what is
// refused and explained to the agent, and how each waits for its acknowledgement.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { AgentUpdateMessage } from '../../src/agent/protocol.js';
import { AgentUpdater, readUpdateRequest } from '../../src/agent/updates.js';

const TURN_ES = { provider: { type: 'speech', version: 'v2', model: 'turn-luna-es' } };

describe('readUpdateRequest', () => {
  it('passes an answer without an update through untouched', () => {
    for (const content of ['{"ok":true}', 'plain text', '[1,2]', '{"error":"x"} …[truncated]']) {
      expect(readUpdateRequest(content, ['speak'])).toEqual({ content, updates: [], refused: [] });
    }
  });

  it('turns an allowed speak update into UpdateSpeak and hides it from the agent', () => {
    const request = readUpdateRequest(JSON.stringify({ ok: true, update: { speak: TURN_ES } }), ['speak']);
    expect(request.updates).toEqual([{ type: 'UpdateSpeak', speak: TURN_ES }]);
    expect(JSON.parse(request.content)).toEqual({ ok: true });
    expect(request.refused).toEqual([]);
  });

  it('keeps a speak list as a list, and checks each entry by the v1/v2 rule', () => {
    const lyric = { provider: { type: 'speech', model: 'lyric-2-andromeda-en' } };
    const ok = readUpdateRequest(JSON.stringify({ update: { speak: [TURN_ES, lyric] } }), ['speak']);
    expect(ok.updates).toEqual([{ type: 'UpdateSpeak', speak: [TURN_ES, lyric] }]);

    const bad = readUpdateRequest(
      JSON.stringify({
        update: { speak: { provider: { type: 'speech', version: 'v2', model: 'lyric-2-luna-en' } } },
      }),
      ['speak'],
    );
    expect(bad.updates).toEqual([]);
    expect(bad.refused).toEqual(['speak: version v2 needs a turn- model, got "lyric-2-luna-en"']);
    expect(JSON.parse(bad.content)).toEqual({ update_refused: bad.refused });
  });

  it('refuses kinds the profile does not allow, unknown kinds and malformed updates', () => {
    const request = readUpdateRequest(
      JSON.stringify({
        ok: true,
        update: { speak: TURN_ES, listen: { provider: { type: 'speech', model: 'std-3' } }, voice: 'x' },
      }),
      ['listen'],
    );
    expect(request.updates).toEqual([
      { type: 'UpdateListen', listen: { provider: { type: 'speech', model: 'std-3' } } },
    ]);
    expect(request.refused).toEqual([
      'voice is not an update kind',
      'speak updates are not allowed for this function',
    ]);
    for (const update of [
      null,
      'turn-luna-es',
      [TURN_ES],
      { speak: [] },
      { speak: 'turn-luna-es' },
      { think: {} },
    ]) {
      const r = readUpdateRequest(JSON.stringify({ update }), ['speak', 'think', 'listen']);
      expect(r.updates).toEqual([]);
      expect(r.refused.length).toBeGreaterThan(0);
    }
  });

  it("gives a think update the profile's prompt and functions when it names none", () => {
    const functions = [{ name: 'end_call', description: 'd', parameters: {} }];
    const request = readUpdateRequest(
      JSON.stringify({
        update: { think: { provider: { type: 'anthropic', model: 'claude-3-5-haiku-latest' } } },
      }),
      ['think'],
      { prompt: 'Be brief.', functions },
    );
    expect(request.updates).toEqual([
      {
        type: 'UpdateThink',
        think: {
          prompt: 'Be brief.',
          functions,
          provider: { type: 'anthropic', model: 'claude-3-5-haiku-latest' },
        },
      },
    ]);
  });
});

describe('AgentUpdater', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  const speak: AgentUpdateMessage = { type: 'UpdateSpeak', speak: TURN_ES };
  const listen: AgentUpdateMessage = {
    type: 'UpdateListen',
    listen: { provider: { type: 'speech', model: 'std-3' } },
  };

  it('sends the update and settles it on its own acknowledgement only', async () => {
    const sent: AgentUpdateMessage[] = [];
    const updater = new AgentUpdater((m) => sent.push(m));
    const applied = updater.request(speak);
    expect(sent).toEqual([speak]);
    expect(updater.onMessage({ type: 'ListenUpdated' })).toBe(false);
    expect(updater.onMessage({ type: 'PromptUpdated' })).toBe(false);
    expect(updater.onMessage({ type: 'SpeakUpdated' })).toBe(true);
    await expect(applied).resolves.toBe('applied');
    // Nothing waits any more: a stray acknowledgement is not consumed.
    expect(updater.onMessage({ type: 'SpeakUpdated' })).toBe(false);
  });

  it('settles waiting updates of one kind oldest first', async () => {
    const updater = new AgentUpdater(() => {});
    const order: string[] = [];
    const first = updater.request(speak).then((o) => order.push(`first ${o}`));
    const second = updater.request(speak).then((o) => order.push(`second ${o}`));
    updater.onMessage({ type: 'SpeakUpdated' });
    await first;
    updater.onMessage({ type: 'SpeakUpdated' });
    await second;
    expect(order).toEqual(['first applied', 'second applied']);
  });

  it('gives up on an update that is never acknowledged, after its timeout', async () => {
    vi.useFakeTimers();
    const updater = new AgentUpdater(() => {}, { timeoutMs: 3000 });
    const outcome = updater.request(listen);
    vi.advanceTimersByTime(2999);
    let settled = false;
    void outcome.then(() => {
      settled = true;
    });
    await Promise.resolve();
    expect(settled).toBe(false);
    vi.advanceTimersByTime(1);
    await expect(outcome).resolves.toBe('timeout');
    // A late acknowledgement settles nothing.
    expect(updater.onMessage({ type: 'ListenUpdated' })).toBe(false);
  });

  it('settles everything as closed when the call ends, and sends nothing afterwards', async () => {
    const sent: AgentUpdateMessage[] = [];
    const updater = new AgentUpdater((m) => sent.push(m));
    const waiting = updater.request(speak);
    updater.close();
    await expect(waiting).resolves.toBe('closed');
    await expect(updater.request(listen)).resolves.toBe('closed');
    expect(sent).toEqual([speak]);
  });

  it('settles an update the dropped session never acknowledged once a redial applied Settings carrying it', async () => {
    const updater = new AgentUpdater(() => {});
    const waiting = updater.request(speak);
    const settings = updater.applyTo({
      type: 'Settings',
      audio: {
        input: { encoding: 'mulaw', sample_rate: 8000 },
        output: { encoding: 'mulaw', sample_rate: 8000, container: 'none' },
      },
      agent: {},
    });
    expect(settings.agent.speak).toEqual(TURN_ES);
    // Asked for after those Settings were built: the new session has to acknowledge it itself.
    const later = updater.request(listen);
    let laterSettled = false;
    void later.then(() => {
      laterSettled = true;
    });
    updater.settingsApplied();
    await expect(waiting).resolves.toBe('applied');
    await Promise.resolve();
    expect(laterSettled).toBe(false);
    expect(updater.onMessage({ type: 'ListenUpdated' })).toBe(true);
    await expect(later).resolves.toBe('applied');
    updater.close();
  });

  it('lays the latest updates over the Settings of a redial', () => {
    const updater = new AgentUpdater(() => {});
    void updater.request(speak);
    void updater.request(listen);
    const settings = {
      type: 'Settings' as const,
      audio: {
        input: { encoding: 'mulaw' as const, sample_rate: 8000 },
        output: { encoding: 'mulaw' as const, sample_rate: 8000, container: 'none' as const },
      },
      agent: {
        think: { provider: { type: 'open_ai' } },
        speak: { provider: { type: 'speech', model: 'lyric-2-a-en' } },
      },
    };
    const updated = updater.applyTo(settings);
    expect(updated.agent.speak).toEqual(TURN_ES);
    expect(updated.agent.listen).toEqual({ provider: { type: 'speech', model: 'std-3' } });
    expect(updated.agent.think).toEqual({ provider: { type: 'open_ai' } });
    expect(settings.agent.speak).toEqual({ provider: { type: 'speech', model: 'lyric-2-a-en' } });
    updater.close();
  });
});
