// The config folder that ships with the project must load as it is, so `npm start` works on a
// fresh checkout with no environment at all.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/carriers/load-config.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

describe('shipped config folder', () => {
  const config = loadConfig({}, { cwd: ROOT });

  it('loads with an empty environment and runs the built-in local agent', () => {
    expect(config.agent.url).toBeNull();
    expect(config.numbers.default).toBe('default');
  });

  it('has a receptionist default profile that can end calls', () => {
    const profile = config.profiles.default;
    expect(profile?.greeting).toBeTruthy();
    expect(profile?.prompt).toMatch(/receptionist/);
    expect(profile?.builtins.endCall).toBe(true);
  });

  it('routes its example number to an existing profile', () => {
    for (const profile of Object.values(config.numbers.routes)) {
      expect(Object.keys(config.profiles)).toContain(profile);
    }
  });

  it('lists neutral example hosts for each region', () => {
    expect(config.regions.global).toEqual({
      agentUrl: 'wss://agent.speech.example',
      speechApiUrl: 'https://api.speech.example',
      managementApiUrl: 'https://api.speech.example',
    });
    for (const region of ['eu', 'au', 'in'] as const) {
      expect(config.regions[region].agentUrl).toBe(`wss://api.${region}.speech.example`);
      expect(config.regions[region].speechApiUrl).toBe(`https://api.${region}.speech.example`);
    }
  });
});
