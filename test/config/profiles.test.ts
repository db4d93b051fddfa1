import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  configErrorOf,
  load,
  loadProfile,
  MINIMAL_PROFILE,
  makeProject,
  profileError,
  REGIONS_JSON,
  removeProjects,
} from './project.js';

afterEach(removeProjects);

const FILE = 'config/agents/default.json';
const FN = { name: 'lookup_order', description: 'Finds an order.', url: 'https://orders.example.com/lookup' };

const withSpeak = (provider: Record<string, unknown>) => ({ ...MINIMAL_PROFILE, speak: { provider } });
const withFunctions = (...functions: unknown[]) => ({ ...MINIMAL_PROFILE, functions });

describe('profile defaults', () => {
  it('fills every optional setting of a profile with only prompt and think', () => {
    expect(loadProfile(MINIMAL_PROFILE)).toEqual({
      name: 'default',
      language: 'en',
      prompt: MINIMAL_PROFILE.prompt,
      think: [MINIMAL_PROFILE.think],
      builtins: { endCall: false, transferAllowList: [] },
      httpFunctions: [],
      dtmf: { enabled: true, interDigitTimeoutMs: 2000, terminator: '#', maxDigits: 20 },
      limits: { silencePromptMs: 15_000, silenceHangupMs: 45_000, maxCallMs: 3_600_000 },
      fallback: {},
      tags: [],
    });
  });

  it('leaves greeting, listen and speak absent when not given', () => {
    const profile = loadProfile(MINIMAL_PROFILE);
    expect('greeting' in profile).toBe(false);
    expect('listen' in profile).toBe(false);
    // No speak at all: the agent uses its default voice, turn-kit-en.
    expect('speak' in profile).toBe(false);
  });

  it('maps every field of a full profile', () => {
    const profile = loadProfile({
      language: 'es',
      prompt: 'Eres recepcionista.',
      greeting: 'Hola.',
      listen: { provider: { type: 'speech', model: 'std-3' } },
      think: {
        provider: { type: 'open_ai', model: 'gpt-4o-mini', temperature: 0.7 },
        endpoint: { url: 'x' },
      },
      speak: { provider: { type: 'speech', version: 'v2', model: 'turn-kit-en', speed: 1.1 } },
      endCall: true,
      transfer: { allow: ['+15551234567', 'sip:desk@example.com'] },
      functions: [
        {
          ...FN,
          parameters: { type: 'object', properties: { id: { type: 'string' } } },
          secret: 's',
          timeoutMs: 3000,
        },
      ],
      dtmf: { enabled: false, interDigitTimeoutMs: 1500, terminator: '*', maxDigits: 6 },
      limits: { silencePromptMs: 10_000, silenceHangupMs: 30_000, maxCallMs: 600_000 },
      fallback: { audioFile: 'assets/hold.ulaw', transferTo: 'sip:desk@example.com' },
      tags: ['spanish'],
    });
    expect(profile).toMatchObject({
      language: 'es',
      greeting: 'Hola.',
      listen: { provider: { type: 'speech', model: 'std-3' } },
      think: [{ provider: { temperature: 0.7 }, endpoint: { url: 'x' } }],
      speak: [{ provider: { type: 'speech', version: 'v2', model: 'turn-kit-en', speed: 1.1 } }],
      builtins: { endCall: true, transferAllowList: ['+15551234567', 'sip:desk@example.com'] },
      httpFunctions: [
        {
          name: 'lookup_order',
          description: 'Finds an order.',
          parameters: { type: 'object', properties: { id: { type: 'string' } } },
          url: 'https://orders.example.com/lookup',
          secret: 's',
          timeoutMs: 3000,
        },
      ],
      dtmf: { enabled: false, interDigitTimeoutMs: 1500, terminator: '*', maxDigits: 6 },
      limits: { silencePromptMs: 10_000, silenceHangupMs: 30_000, maxCallMs: 600_000 },
      fallback: { transferTo: 'sip:desk@example.com' },
      tags: ['spanish'],
    });
  });

  it('fills the rest of a partly given dtmf or limits block', () => {
    const profile = loadProfile({
      ...MINIMAL_PROFILE,
      dtmf: { maxDigits: 4 },
      limits: { maxCallMs: 60_000 },
    });
    expect(profile.dtmf).toEqual({ enabled: true, interDigitTimeoutMs: 2000, terminator: '#', maxDigits: 4 });
    expect(profile.limits).toEqual({ silencePromptMs: 15_000, silenceHangupMs: 45_000, maxCallMs: 60_000 });
  });

  it('keeps an explicit 0, which disables a limit', () => {
    const profile = loadProfile({
      ...MINIMAL_PROFILE,
      limits: { silencePromptMs: 0, silenceHangupMs: 0, maxCallMs: 0 },
    });
    expect(profile.limits).toEqual({ silencePromptMs: 0, silenceHangupMs: 0, maxCallMs: 0 });
  });

  it('gives functions a default timeout and an empty parameter object', () => {
    expect(loadProfile(withFunctions(FN)).httpFunctions).toEqual([
      { ...FN, parameters: { type: 'object', properties: {} }, timeoutMs: 5000 },
    ]);
  });
});

describe('speak provider rules (docs/protocols/speech-service.md section 3)', () => {
  it('sets version v1 when a provider has none', () => {
    expect(loadProfile(withSpeak({ type: 'speech', model: 'lyric-2-andromeda-en' })).speak).toEqual([
      { provider: { type: 'speech', version: 'v1', model: 'lyric-2-andromeda-en' } },
    ]);
  });

  it('rejects a turn- model when version is omitted, since that means v1', () => {
    expect(profileError(withSpeak({ type: 'speech', model: 'turn-kit-en' }))).toBe(
      `${FILE}: /speak/provider/model: version v1 (the default when version is omitted) needs a lyric- model, got "turn-kit-en"; set "version": "v2" for turn- voices`,
    );
  });

  it('requires a lyric- model with v1', () => {
    expect(profileError(withSpeak({ type: 'speech', version: 'v1', model: 'turn-kit-en' }))).toBe(
      `${FILE}: /speak/provider/model: version v1 needs a lyric- model, got "turn-kit-en"; set "version": "v2" for turn- voices`,
    );
    expect(profileError(withSpeak({ type: 'speech', version: 'v1', model: 'std-3' }))).toBe(
      `${FILE}: /speak/provider/model: version v1 needs a lyric- model, got "std-3"`,
    );
  });

  it('requires a turn- model with v2', () => {
    expect(profileError(withSpeak({ type: 'speech', version: 'v2', model: 'lyric-2-andromeda-en' }))).toBe(
      `${FILE}: /speak/provider/model: version v2 needs a turn- model, got "lyric-2-andromeda-en"`,
    );
    expect(
      loadProfile(withSpeak({ type: 'speech', version: 'v2', model: 'turn-kit-en' })).speak?.[0]?.provider,
    ).toEqual({
      type: 'speech',
      version: 'v2',
      model: 'turn-kit-en',
    });
  });

  it('rejects another version and a provider without a model', () => {
    expect(profileError(withSpeak({ type: 'speech', version: 'v3', model: 'turn-kit-en' }))).toBe(
      `${FILE}: /speak/provider/version: must be "v1" or "v2", got "v3"`,
    );
    expect(profileError(withSpeak({ type: 'speech', version: 'v2' }))).toBe(
      `${FILE}: /speak/provider/model: is required`,
    );
  });
});

describe('profile shape', () => {
  it('requires prompt and think', () => {
    expect(profileError({ think: MINIMAL_PROFILE.think })).toBe(`${FILE}: /prompt: is required`);
    expect(profileError({ prompt: 'p' })).toBe(`${FILE}: /think: is required`);
    expect(profileError({ prompt: '', think: MINIMAL_PROFILE.think })).toBe(
      `${FILE}: /prompt: must not be empty, got ""`,
    );
    expect(profileError({ prompt: 'p', think: { provider: {} } })).toBe(
      `${FILE}: /think/provider/type: is required`,
    );
  });

  it('names an unknown field, before the required one it may stand for', () => {
    expect(profileError({ promt: 'p', think: MINIMAL_PROFILE.think })).toBe(`${FILE}: /promt: unknown field`);
    expect(profileError({ ...MINIMAL_PROFILE, dtmf: { terminatr: '#' } })).toBe(
      `${FILE}: /dtmf/terminatr: unknown field`,
    );
  });

  it('passes extra provider fields through', () => {
    expect(loadProfile(MINIMAL_PROFILE).think[0]?.provider).toEqual({
      type: 'open_ai',
      model: 'gpt-4o-mini',
    });
  });

  it('names the field and value of a wrong type', () => {
    expect(profileError({ ...MINIMAL_PROFILE, endCall: 'yes' })).toBe(
      `${FILE}: /endCall: must be true or false, got "yes"`,
    );
    expect(profileError({ ...MINIMAL_PROFILE, tags: 'demo' })).toBe(
      `${FILE}: /tags: must be an array, got "demo"`,
    );
    expect(profileError({ ...MINIMAL_PROFILE, tags: ['a', 'a'] })).toBe(
      `${FILE}: /tags: must not list the same entry twice`,
    );
    expect(profileError([])).toBe(`${FILE}: /: must be an object`);
  });

  it('names the file and the parse problem of invalid JSON, without quoting the file', () => {
    const message = profileError('{\n  "prompt": "p",\n  "secret": "hunter2"\n  "think": {}\n}');
    expect(message).toBe(
      `${FILE}: invalid JSON: Expected ',' or '}' after property value at line 4 column 3`,
    );
    expect(message).not.toContain('hunter2');
    expect(profileError('{"prompt": }')).toBe(`${FILE}: invalid JSON: Unexpected token '}'`);
    expect(profileError('')).toBe(`${FILE}: invalid JSON: Unexpected end of JSON input`);
  });
});

describe('functions', () => {
  it.each(['1lookup', 'look-up', 'a'.repeat(65), ''])('rejects the name %j', (name) => {
    expect(profileError(withFunctions({ ...FN, name }))).toBe(
      `${FILE}: /functions/0/name: must be a letter or _, then up to 63 letters, digits or _, got ${JSON.stringify(name)}`,
    );
  });

  it('accepts a 64-character name', () => {
    const name = `_${'a'.repeat(63)}`;
    expect(loadProfile(withFunctions({ ...FN, name })).httpFunctions[0]?.name).toBe(name);
  });

  it('rejects a name used twice', () => {
    expect(profileError(withFunctions(FN, { ...FN, url: 'https://other.example.com' }))).toBe(
      `${FILE}: /functions/1/name: "lookup_order" is defined twice`,
    );
  });

  it.each(['end_call', 'transfer_call'])('rejects the built-in name %s', (name) => {
    expect(profileError(withFunctions({ ...FN, name }))).toBe(
      `${FILE}: /functions/0/name: "${name}" is built in; enable it with endCall or transfer instead`,
    );
  });

  it.each(['ftp://orders.example.com', 'orders.example.com', 'https://orders.example.com/x#y'])(
    'rejects the url %s',
    (url) => {
      expect(profileError(withFunctions({ ...FN, url }))).toBe(
        `${FILE}: /functions/0/url: must be an http or https URL with no fragment, got "${url}"`,
      );
    },
  );

  it('bounds timeoutMs to 1..30000', () => {
    for (const timeoutMs of [0, 30_001]) {
      expect(profileError(withFunctions({ ...FN, timeoutMs }))).toBe(
        `${FILE}: /functions/0/timeoutMs: must be an integer from 1 to 30000, got ${timeoutMs}`,
      );
    }
    expect(profileError(withFunctions({ ...FN, timeoutMs: 1.5 }))).toBe(
      `${FILE}: /functions/0/timeoutMs: must be an integer, got 1.5`,
    );
  });

  it('requires description and url', () => {
    expect(profileError(withFunctions({ name: 'f', url: FN.url }))).toBe(
      `${FILE}: /functions/0/description: is required`,
    );
    expect(profileError(withFunctions({ name: 'f', description: 'd' }))).toBe(
      `${FILE}: /functions/0/url: is required`,
    );
  });
});

describe('transfer and fallback targets', () => {
  it.each(['5551234567', '+05551234567', '+1555', 'sip:', 'tel:+15551234567'])('rejects %s', (target) => {
    expect(profileError({ ...MINIMAL_PROFILE, transfer: { allow: ['+15551234567', target] } })).toBe(
      `${FILE}: /transfer/allow/1: must be an E.164 number (+ then 7 to 15 digits) or a sip: address, got "${target}"`,
    );
    expect(profileError({ ...MINIMAL_PROFILE, fallback: { transferTo: target } })).toBe(
      `${FILE}: /fallback/transferTo: must be an E.164 number (+ then 7 to 15 digits) or a sip: address, got "${target}"`,
    );
  });

  it('accepts E.164 numbers and sip: addresses', () => {
    const profile = loadProfile({
      ...MINIMAL_PROFILE,
      transfer: { allow: ['+15551234567', 'sip:desk@example.com'] },
      fallback: { transferTo: '+442071234567' },
    });
    expect(profile.builtins.transferAllowList).toEqual(['+15551234567', 'sip:desk@example.com']);
    expect(profile.fallback).toEqual({ transferTo: '+442071234567' });
  });

  it('resolves fallback.audioFile against the project root, the parent of the config folder', () => {
    const root = makeProject({ [FILE]: { ...MINIMAL_PROFILE, fallback: { audioFile: 'assets/hold.ulaw' } } });
    expect(load({}, root).profiles.default?.fallback.audioFile).toBe(join(root, 'assets/hold.ulaw'));

    const elsewhere = makeProject({
      'deploy/config/regions.json': REGIONS_JSON,
      'deploy/config/agents/default.json': {
        ...MINIMAL_PROFILE,
        fallback: { audioFile: 'sounds/sorry.ulaw' },
      },
      'deploy/sounds/sorry.ulaw': 'audio',
    });
    expect(load({ CONFIG_DIR: 'deploy/config' }, elsewhere).profiles.default?.fallback.audioFile).toBe(
      join(elsewhere, 'deploy/sounds/sorry.ulaw'),
    );
  });

  it('rejects a fallback audio file that does not exist', () => {
    const root = makeProject({
      [FILE]: { ...MINIMAL_PROFILE, fallback: { audioFile: 'assets/missing.ulaw' } },
    });
    expect(configErrorOf(() => load({}, root)).message).toBe(
      `${FILE}: /fallback/audioFile: no such file "assets/missing.ulaw" (resolved to ${join(root, 'assets/missing.ulaw')})`,
    );
    const folder = makeProject({ [FILE]: { ...MINIMAL_PROFILE, fallback: { audioFile: 'assets' } } });
    expect(configErrorOf(() => load({}, folder)).message).toMatch(
      /^config\/agents\/default\.json: \/fallback\/audioFile: no such file "assets"/,
    );
  });
});

describe('dtmf and limits', () => {
  it.each(['#', '*', ''])('accepts the terminator %j', (terminator) => {
    expect(loadProfile({ ...MINIMAL_PROFILE, dtmf: { terminator } }).dtmf.terminator).toBe(terminator);
  });

  it('rejects another terminator', () => {
    expect(profileError({ ...MINIMAL_PROFILE, dtmf: { terminator: 'x' } })).toBe(
      `${FILE}: /dtmf/terminator: must be "#", "*" or "" (no terminator), got "x"`,
    );
  });

  it('bounds maxDigits and interDigitTimeoutMs', () => {
    expect(profileError({ ...MINIMAL_PROFILE, dtmf: { maxDigits: 0 } })).toBe(
      `${FILE}: /dtmf/maxDigits: must be an integer from 1 to 64, got 0`,
    );
    expect(profileError({ ...MINIMAL_PROFILE, dtmf: { interDigitTimeoutMs: -1 } })).toBe(
      `${FILE}: /dtmf/interDigitTimeoutMs: must be an integer from 1 to 60000, got -1`,
    );
  });

  it('requires the silence hang-up to come after the silence prompt unless either is off', () => {
    expect(
      profileError({ ...MINIMAL_PROFILE, limits: { silencePromptMs: 20_000, silenceHangupMs: 20_000 } }),
    ).toBe(
      `${FILE}: /limits/silenceHangupMs: must be greater than silencePromptMs (20000) unless either is 0, got 20000`,
    );
    expect(
      loadProfile({ ...MINIMAL_PROFILE, limits: { silencePromptMs: 0, silenceHangupMs: 5000 } }).limits,
    ).toEqual({
      silencePromptMs: 0,
      silenceHangupMs: 5000,
      maxCallMs: 3_600_000,
    });
  });

  it('rejects a negative limit', () => {
    expect(profileError({ ...MINIMAL_PROFILE, limits: { maxCallMs: -1 } })).toBe(
      `${FILE}: /limits/maxCallMs: must be an integer from 0 to 86400000, got -1`,
    );
  });
});

describe('profile files', () => {
  it('names each profile after its file and ignores other files', () => {
    const root = makeProject({
      'config/agents/sales-eu_2.json': MINIMAL_PROFILE,
      'config/agents/README.md': '# profiles',
    });
    expect(Object.keys(load({}, root).profiles)).toEqual(['default', 'sales-eu_2']);
    expect(load({}, root).profiles['sales-eu_2']?.name).toBe('sales-eu_2');
  });

  it.each(['Sales', '-sales', 'sales.v2'])('rejects the profile name %s', (name) => {
    const root = makeProject({ [`config/agents/${name}.json`]: MINIMAL_PROFILE });
    expect(configErrorOf(() => load({}, root)).message).toBe(
      `config/agents/${name}.json: profile name "${name}" must be lowercase letters, digits, - and _, starting with a letter or digit`,
    );
  });

  it('requires at least one profile', () => {
    const empty = makeProject({ [FILE]: null, 'config/agents/notes.txt': 'none here' });
    expect(configErrorOf(() => load({}, empty)).message).toBe(
      'config/agents: no agent profiles; add at least one <name>.json',
    );
    const missing = makeProject({ 'config/agents': null });
    expect(configErrorOf(() => load({}, missing)).message).toBe(
      'config/agents: cannot read the agent profiles folder (ENOENT)',
    );
  });
});

describe('think and speak fallback chains (docs/protocols/agent.md)', () => {
  const lyric = { type: 'speech', model: 'lyric-2-andromeda-en' };
  const turn = { type: 'speech', version: 'v2', model: 'turn-kit-en' };

  it('keeps a list of think providers in order, and a single one as a list of one', () => {
    const profile = loadProfile({
      ...MINIMAL_PROFILE,
      think: [
        { provider: { type: 'open_ai', model: 'gpt-4o-mini' } },
        { provider: { type: 'anthropic', model: 'claude-3-5-haiku-latest' }, endpoint: { url: 'y' } },
      ],
    });
    expect(profile.think).toEqual([
      { provider: { type: 'open_ai', model: 'gpt-4o-mini' } },
      { provider: { type: 'anthropic', model: 'claude-3-5-haiku-latest' }, endpoint: { url: 'y' } },
    ]);
    expect(loadProfile(MINIMAL_PROFILE).think).toHaveLength(1);
  });

  it('checks every speak entry by its own version rule and names the entry that breaks it', () => {
    const profile = loadProfile({ ...MINIMAL_PROFILE, speak: [{ provider: turn }, { provider: lyric }] });
    expect(profile.speak?.map((s) => s.provider)).toEqual([turn, { ...lyric, version: 'v1' }]);
    expect(
      profileError({
        ...MINIMAL_PROFILE,
        speak: [
          { provider: turn },
          { provider: { type: 'speech', version: 'v2', model: 'lyric-2-luna-en' } },
        ],
      }),
    ).toBe(`${FILE}: /speak/1/provider/model: version v2 needs a turn- model, got "lyric-2-luna-en"`);
    expect(profileError({ ...MINIMAL_PROFILE, speak: [{ provider: turn }, { provider: {} }] })).toBe(
      `${FILE}: /speak/1/provider/type: is required`,
    );
  });

  it('refuses an empty or overlong chain and an entry that is not an object', () => {
    expect(profileError({ ...MINIMAL_PROFILE, think: [] })).toBe(
      `${FILE}: /think: a list must hold 1 to 5 providers, got 0`,
    );
    expect(
      profileError({ ...MINIMAL_PROFILE, speak: Array.from({ length: 6 }, () => ({ provider: turn })) }),
    ).toBe(`${FILE}: /speak: a list must hold 1 to 5 providers, got 6`);
    expect(profileError({ ...MINIMAL_PROFILE, think: ['gpt-4o-mini'] })).toBe(
      `${FILE}: /think/0: must be an object, got "gpt-4o-mini"`,
    );
    expect(profileError({ ...MINIMAL_PROFILE, think: 'gpt-4o-mini' })).toBe(
      `${FILE}: /think: must be an object, got "gpt-4o-mini"`,
    );
    expect(profileError({ ...MINIMAL_PROFILE, think: [{ provider: { type: 'x' }, prompt: 'p' }] })).toBe(
      `${FILE}: /think/0/prompt: unknown field`,
    );
  });
});

describe('speak speed (docs/protocols/speech-service.md section 10)', () => {
  const speak = (provider: Record<string, unknown>) => profileError(withSpeak(provider));

  it('takes 0.7 to 1.5 on v1, for lyric-2 English and Spanish voices only', () => {
    expect(
      loadProfile(withSpeak({ type: 'speech', model: 'lyric-2-andromeda-en', speed: 0.7 })).speak,
    ).toHaveLength(1);
    expect(
      loadProfile(withSpeak({ type: 'speech', model: 'lyric-2-celeste-es', speed: 1.5 })).speak,
    ).toHaveLength(1);
    expect(speak({ type: 'speech', model: 'lyric-2-andromeda-en', speed: 0.6 })).toBe(
      `${FILE}: /speak/provider/speed: must be from 0.7 to 1.5 on version v1, got 0.6`,
    );
    expect(speak({ type: 'speech', model: 'lyric-1-asteria-en', speed: 1 })).toBe(
      `${FILE}: /speak/provider/speed: version v1 takes a speed only for lyric-2-* English and Spanish voices, not "lyric-1-asteria-en"`,
    );
    expect(speak({ type: 'speech', model: 'lyric-2-andromeda-fr', speed: 1 })).toMatch(/English and Spanish/);
  });

  it('takes 0.5 to 1.5 in steps of 0.05 on v2', () => {
    const turn = (speed: unknown) => ({ type: 'speech', version: 'v2', model: 'turn-kit-en', speed });
    expect(loadProfile(withSpeak(turn(0.5))).speak?.[0]?.provider.speed).toBe(0.5);
    expect(loadProfile(withSpeak(turn(1.35))).speak?.[0]?.provider.speed).toBe(1.35);
    expect(speak(turn(1.07))).toBe(
      `${FILE}: /speak/provider/speed: must be from 0.5 to 1.5 in steps of 0.05 on version v2, got 1.07`,
    );
    expect(speak(turn(1.55))).toMatch(/from 0.5 to 1.5/);
    expect(speak(turn('fast'))).toBe(`${FILE}: /speak/provider/speed: must be a number`);
  });
});

describe('functions that may update the agent', () => {
  it('keeps the updates a function may request, and refuses an unknown kind', () => {
    expect(
      loadProfile(withFunctions({ ...FN, mayUpdate: ['speak', 'listen'] })).httpFunctions[0]?.mayUpdate,
    ).toEqual(['speak', 'listen']);
    expect(loadProfile(withFunctions(FN)).httpFunctions[0]).not.toHaveProperty('mayUpdate');
    expect(profileError(withFunctions({ ...FN, mayUpdate: ['voice'] }))).toBe(
      `${FILE}: /functions/0/mayUpdate/0: must be "speak", "think" or "listen", got "voice"`,
    );
  });
});
