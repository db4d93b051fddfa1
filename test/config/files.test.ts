import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { configErrorOf, load, MINIMAL_PROFILE, makeProject, removeProjects } from './project.js';

afterEach(removeProjects);

const REGIONS = {
  global: { agentUrl: 'wss://agent.speech.example', speechApiUrl: 'https://api.speech.example' },
  eu: { agentUrl: 'wss://api.eu.speech.example', speechApiUrl: 'https://api.eu.speech.example' },
  au: { agentUrl: 'wss://api.au.speech.example', speechApiUrl: 'https://api.au.speech.example' },
  in: { agentUrl: 'wss://api.in.speech.example', speechApiUrl: 'https://api.in.speech.example' },
};

const regionsError = (regions: unknown) =>
  configErrorOf(() => load({}, makeProject({ 'config/regions.json': regions }))).message;

const numbersError = (numbers: unknown, files: Record<string, unknown> = {}) =>
  configErrorOf(() => load({}, makeProject({ 'config/numbers.json': numbers, ...files }))).message;

describe('config/regions.json', () => {
  it('gives each region its hosts, with management on the global API host', () => {
    expect(load({}).regions).toEqual({
      global: { ...REGIONS.global, managementApiUrl: 'https://api.speech.example' },
      eu: { ...REGIONS.eu, managementApiUrl: 'https://api.speech.example' },
      au: { ...REGIONS.au, managementApiUrl: 'https://api.speech.example' },
      in: { ...REGIONS.in, managementApiUrl: 'https://api.speech.example' },
    });
  });

  it('drops trailing slashes', () => {
    const root = makeProject({
      'config/regions.json': {
        ...REGIONS,
        eu: { agentUrl: 'wss://eu.example/', speechApiUrl: 'https://eu.example/' },
      },
    });
    expect(load({}, root).regions.eu).toMatchObject({
      agentUrl: 'wss://eu.example',
      speechApiUrl: 'https://eu.example',
    });
  });

  it('requires the file', () => {
    expect(regionsError(null)).toBe('config/regions.json: cannot read file (ENOENT)');
  });

  it('requires all four regions and no others', () => {
    const { eu: _eu, ...withoutEu } = REGIONS;
    expect(regionsError(withoutEu)).toBe('config/regions.json: /eu: is required');
    expect(regionsError({ ...REGIONS, us: REGIONS.eu })).toBe('config/regions.json: /us: unknown field');
    expect(regionsError({ ...REGIONS, au: { ...REGIONS.au, region: 'au' } })).toBe(
      'config/regions.json: /au/region: unknown field',
    );
    expect(regionsError({ ...REGIONS, in: { agentUrl: 'wss://x.example' } })).toBe(
      'config/regions.json: /in/speechApiUrl: is required',
    );
  });

  it('checks URL schemes', () => {
    expect(
      regionsError({ ...REGIONS, eu: { ...REGIONS.eu, agentUrl: 'https://api.eu.speech.example' } }),
    ).toBe(
      'config/regions.json: /eu/agentUrl: must be a ws or wss URL with no path, query or fragment, got "https://api.eu.speech.example"',
    );
    expect(
      regionsError({ ...REGIONS, global: { ...REGIONS.global, speechApiUrl: 'wss://api.speech.example' } }),
    ).toBe(
      'config/regions.json: /global/speechApiUrl: must be an http or https URL with no path, query or fragment, got "wss://api.speech.example"',
    );
    expect(
      regionsError({ ...REGIONS, au: { ...REGIONS.au, agentUrl: 'wss://api.au.speech.example/v1' } }),
    ).toMatch(/^config\/regions\.json: \/au\/agentUrl: must be a ws or wss URL/);
  });
});

describe('config/numbers.json', () => {
  const twoProfiles = { 'config/agents/sales.json': MINIMAL_PROFILE };

  it('routes numbers to profiles', () => {
    const root = makeProject({
      ...twoProfiles,
      'config/numbers.json': { default: 'default', routes: { '+15550100': 'sales' } },
    });
    expect(load({}, root).numbers).toEqual({ default: 'default', routes: { '+15550100': 'sales' } });
  });

  it('takes routes as optional', () => {
    const root = makeProject({ ...twoProfiles, 'config/numbers.json': { default: 'sales' } });
    expect(load({}, root).numbers).toEqual({ default: 'sales', routes: {} });
  });

  it('sends every call to the default profile when the file is absent', () => {
    expect(load({}).numbers).toEqual({ default: 'default', routes: {} });
  });

  it('needs a profile named default when the file is absent', () => {
    const root = makeProject({
      'config/agents/default.json': null,
      'config/agents/sales.json': MINIMAL_PROFILE,
    });
    expect(configErrorOf(() => load({}, root)).message).toBe(
      'config/numbers.json: missing, and there is no agent profile named "default" to answer calls',
    );
  });

  it('names the field that points at a missing profile', () => {
    expect(numbersError({ default: 'nobody' }, twoProfiles)).toBe(
      'config/numbers.json: /default: no agent profile named "nobody" (profiles: default, sales)',
    );
    expect(numbersError({ default: 'default', routes: { '+15550100': 'ghost' } })).toBe(
      'config/numbers.json: /routes/+15550100: no agent profile named "ghost" (profiles: default)',
    );
    // Inherited object keys are not profiles.
    expect(numbersError({ default: 'constructor' })).toBe(
      'config/numbers.json: /default: no agent profile named "constructor" (profiles: default)',
    );
  });

  it('requires E.164 keys', () => {
    expect(numbersError({ default: 'default', routes: { '5550100': 'default' } })).toBe(
      'config/numbers.json: /routes/5550100: key must be an E.164 number (+ then 7 to 15 digits)',
    );
  });

  it('checks the shape', () => {
    expect(numbersError({ routes: {} })).toBe('config/numbers.json: /default: is required');
    expect(numbersError({ default: 'default', fallback: 'default' })).toBe(
      'config/numbers.json: /fallback: unknown field',
    );
    expect(numbersError({ default: 'default', routes: { '+15550100': 7 } })).toBe(
      'config/numbers.json: /routes/+15550100: must be a string, got 7',
    );
    expect(numbersError('{"default": "default",}')).toMatch(/^config\/numbers\.json: invalid JSON: /);
  });
});

describe('file names in messages', () => {
  it('shows an absolute path for a config folder outside the working directory', () => {
    const root = makeProject({ 'config/numbers.json': { default: 'nobody' } });
    const outside = makeProject();
    const message = configErrorOf(() => load({ CONFIG_DIR: join(root, 'config') }, outside)).message;
    expect(message.startsWith(`${join(root, 'config/numbers.json')}: /default: `)).toBe(true);
  });
});
