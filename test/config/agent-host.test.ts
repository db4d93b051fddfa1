import { describe, expect, it } from 'vitest';
import { configErrorOf, load } from './project.js';

const KEY = 'agent-key-do-not-print';

describe('agent host selection', () => {
  it('runs the built-in local agent when neither AGENT_URL, AGENT_API_KEY nor REGION is set', () => {
    expect(load({}).agent).toEqual({
      url: null,
      apiKey: null,
      auth: 'key',
      speechApiUrl: 'https://api.speech.example',
      managementApiUrl: 'https://api.speech.example',
      connectTimeoutMs: 5000,
      prewarm: true,
      prewarmTtlMs: 15000,
    });
  });

  it('reads the pre-warming switch and its wait', () => {
    const agent = load({ AGENT_PREWARM: 'false', AGENT_PREWARM_TTL_MS: '2000' }).agent;
    expect(agent.prewarm).toBe(false);
    expect(agent.prewarmTtlMs).toBe(2000);
    expect(configErrorOf(() => load({ AGENT_PREWARM: 'yes' })).message).toMatch(/^AGENT_PREWARM: /);
    expect(configErrorOf(() => load({ AGENT_PREWARM_TTL_MS: '0' })).message).toMatch(
      /^AGENT_PREWARM_TTL_MS: /,
    );
  });

  it('uses AGENT_URL with its key, without a trailing slash', () => {
    const agent = load({ AGENT_URL: 'wss://agent.example.net/', AGENT_API_KEY: KEY }).agent;
    expect(agent.url).toBe('wss://agent.example.net');
    expect(agent.apiKey).toBe(KEY);
    expect(load({ AGENT_URL: 'ws://127.0.0.1:9000', AGENT_API_KEY: KEY }).agent.url).toBe(
      'ws://127.0.0.1:9000',
    );
  });

  it('looks for the speech API beside an agent on this machine (callbridge sim), not at the region', () => {
    const local = (url: string, env: Record<string, string> = {}) =>
      load({ AGENT_URL: url, AGENT_API_KEY: KEY, ...env }).agent.speechApiUrl;
    expect(local('ws://127.0.0.1:8090')).toBe('http://127.0.0.1:8090');
    expect(local('ws://localhost:8090')).toBe('http://localhost:8090');
    expect(local('wss://[::1]:8443')).toBe('https://[::1]:8443');
    expect(local('ws://127.0.0.1:8090', { SPEECH_API_URL: 'https://speech.example.org' })).toBe(
      'https://speech.example.org',
    );
    // A remote agent host keeps the region's speech host.
    expect(local('wss://agent.example.net')).toBe('https://api.speech.example');
  });

  it('requires AGENT_API_KEY with AGENT_URL', () => {
    expect(configErrorOf(() => load({ AGENT_URL: 'wss://agent.example.net' })).message).toBe(
      'AGENT_API_KEY: required when AGENT_URL is set',
    );
  });

  it.each([
    'wss://agent.example.net/v1/agent/converse',
    'wss://agent.example.net?x=1',
    'wss://agent.example.net#x',
    'https://agent.example.net',
    'wss://user:pw@agent.example.net',
  ])('rejects AGENT_URL=%s', (value) => {
    const message = configErrorOf(() => load({ AGENT_URL: value, AGENT_API_KEY: KEY })).message;
    expect(message).toMatch(/^AGENT_URL: must be a ws or wss URL with no path, query or fragment/);
    expect(message).not.toContain(KEY);
    expect(message).not.toContain('pw@');
  });

  it('uses the global agent host when only AGENT_API_KEY is set', () => {
    const agent = load({ AGENT_API_KEY: KEY }).agent;
    expect(agent.url).toBe('wss://agent.speech.example');
    expect(agent.speechApiUrl).toBe('https://api.speech.example');
  });

  it('uses the regional API host as agent host, and the global host for management', () => {
    const config = load({ REGION: 'eu', AGENT_API_KEY: KEY });
    expect(config.region).toBe('eu');
    expect(config.agent.url).toBe('wss://api.eu.speech.example');
    expect(config.agent.speechApiUrl).toBe('https://api.eu.speech.example');
    expect(config.agent.managementApiUrl).toBe('https://api.speech.example');
  });

  it('requires AGENT_API_KEY when REGION is set explicitly, even to global', () => {
    expect(configErrorOf(() => load({ REGION: 'global' })).message).toBe(
      'AGENT_API_KEY: required when REGION is set (calls go to wss://agent.speech.example); unset REGION to use the built-in local agent',
    );
    expect(configErrorOf(() => load({ REGION: 'au' })).message).toMatch(
      /^AGENT_API_KEY: required when REGION is set \(calls go to wss:\/\/api\.au\.speech\.example\)/,
    );
  });

  it('lets SPEECH_API_URL override the speech host; on global it is also the management host', () => {
    const global = load({ SPEECH_API_URL: 'http://127.0.0.1:8090/' }).agent;
    expect(global.speechApiUrl).toBe('http://127.0.0.1:8090');
    expect(global.managementApiUrl).toBe('http://127.0.0.1:8090');
    const eu = load({ REGION: 'eu', AGENT_API_KEY: KEY, SPEECH_API_URL: 'https://proxy.example.com' }).agent;
    expect(eu.speechApiUrl).toBe('https://proxy.example.com');
    expect(eu.managementApiUrl).toBe('https://api.speech.example');
  });

  it('rejects a SPEECH_API_URL that is not http or https', () => {
    expect(configErrorOf(() => load({ SPEECH_API_URL: 'wss://api.speech.example' })).message).toBe(
      'SPEECH_API_URL: must be an http or https URL with no query or fragment, got "wss://api.speech.example"',
    );
  });

  it('reads AGENT_AUTH', () => {
    expect(load({ AGENT_AUTH: 'grant' }).agent.auth).toBe('grant');
    expect(configErrorOf(() => load({ AGENT_AUTH: 'jwt' })).message).toBe(
      'AGENT_AUTH: must be one of key, grant, got "jwt"',
    );
  });

  it('reads AGENT_CONNECT_TIMEOUT_MS from 1 to 60000', () => {
    expect(load({ AGENT_CONNECT_TIMEOUT_MS: '250' }).agent.connectTimeoutMs).toBe(250);
    for (const value of ['0', '60001', 'soon']) {
      expect(configErrorOf(() => load({ AGENT_CONNECT_TIMEOUT_MS: value })).message).toBe(
        `AGENT_CONNECT_TIMEOUT_MS: must be an integer from 1 to 60000, got "${value}"`,
      );
    }
  });
});
