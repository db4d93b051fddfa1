// The one rule between the rooms of src/ (docs/architecture.md section 3): a room imports only rooms
// at its own level or below it, never one above; the tools beside the product may use anything.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/build.js';

const SRC = join(ROOT, 'src');

/** Levels from the top down, as the architecture's table of rooms lists them. */
const LEVELS: readonly (readonly string[])[] = [
  // The process, the commands, and the listening port the process claims first.
  ['cli.ts', 'main.ts', 'port-claim.ts'],
  // app.ts, the list of plugins, and the app's own plugins that join rooms (src/app/).
  ['app.ts', 'app'],
  ['admin', 'webhooks', 'fleet'],
  ['carriers', 'recording'],
  // Below the carriers: they implement its originator port.
  ['outbound'],
  ['call'],
  ['trust'],
  ['agent', 'speech'],
  ['audio', 'store', 'config', 'metrics', 'log.ts', 'errors.ts', 'auth.ts', 'http-errors.ts', 'retry.ts'],
  // The wire contract: under everything, since the server's types derive from it.
  ['api'],
];
const TOOLS = new Set(['sim', 'bench', 'doctor', 'campaign-cli']);

function roomOf(file: string): string {
  return relative(SRC, file).split('/')[0]!;
}

function levelOf(room: string): number {
  const level = LEVELS.findIndex((rooms) => rooms.includes(room));
  if (level < 0) throw new Error(`src/${room} is in no room of docs/architecture.md`);
  return level;
}

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return /\.tsx?$/.test(name) ? [path] : [];
  });
}

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/^(?:import|export)\b[^;]*?from '(\.[^']+)'/gms)].map((m) =>
    resolve(dirname(file), m[1]!).replace(/\.js$/, '.ts'),
  );
}

/** Every package a file imports by name (`@sinclair/typebox`, `preact/hooks`). */
function packagesOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/^(?:import|export)\b[^;]*?from '([^.'][^']*)'/gms)].map((m) => m[1]!);
}

/** The rooms of each row of the page's table (section 2), top down, as written there. */
function tableOfRooms(): string[][] {
  const page = readFileSync(join(ROOT, 'docs', 'architecture.md'), 'utf8');
  const section = page.slice(page.indexOf('## 2. Rooms'), page.indexOf('## 3. '));
  return section
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) => [...line.split('|')[1]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!.replace(/\/$/, '')));
}

describe('rooms', () => {
  it('the table of rooms in docs/architecture.md lists these levels and tools, in this order', () => {
    expect(tableOfRooms()).toEqual([...LEVELS.map((rooms) => [...rooms]), [...TOOLS]]);
  });

  it('every room imports only its own level and the ones below it', () => {
    const upward: string[] = [];
    for (const file of sources(SRC)) {
      const room = roomOf(file);
      if (TOOLS.has(room)) continue;
      const level = levelOf(room);
      for (const target of importsOf(file)) {
        const other = roomOf(target);
        if (TOOLS.has(other) && room !== 'main.ts' && room !== 'cli.ts') {
          upward.push(`${relative(SRC, file)} imports the tool ${other}/`);
        } else if (!TOOLS.has(other) && levelOf(other) < level) {
          upward.push(`${relative(SRC, file)} imports ${relative(SRC, target)}`);
        }
      }
    }
    expect(upward).toEqual([]);
  });

  it('the outbound room imports no carrier', () => {
    const outbound = sources(join(SRC, 'outbound'));
    expect(outbound.length).toBeGreaterThan(10);
    const reaching = outbound.filter((file) =>
      importsOf(file).some((target) => roomOf(target) === 'carriers'),
    );
    expect(reaching.map((file) => relative(SRC, file))).toEqual([]);
  });

  it('the wire contract imports nothing of the server, only TypeBox', () => {
    const api = sources(join(SRC, 'api'));
    expect(api.length).toBeGreaterThan(5);
    const outside = api.flatMap((file) => [
      ...importsOf(file)
        .filter((target) => roomOf(target) !== 'api')
        .map((target) => `${relative(SRC, file)} imports ${relative(SRC, target)}`),
      ...packagesOf(file)
        .filter((name) => name !== '@sinclair/typebox')
        .map((name) => `${relative(SRC, file)} imports ${name}`),
    ]);
    expect(outside).toEqual([]);
  });

  it('the console (web/) imports only the wire contract of src/', () => {
    const web = sources(join(ROOT, 'web', 'src'));
    expect(web.length).toBeGreaterThan(10);
    const reaching = web.flatMap((file) =>
      importsOf(file)
        .filter((target) => !target.startsWith(join(ROOT, 'web')) && !target.startsWith(join(SRC, 'api')))
        .map((target) => `${relative(ROOT, file)} imports ${relative(ROOT, target)}`),
    );
    expect(reaching).toEqual([]);
  });

  it('the call core imports no carrier', () => {
    const call = sources(join(SRC, 'call'));
    expect(call.length).toBeGreaterThan(10);
    const reaching = call.filter((file) => importsOf(file).some((target) => roomOf(target) === 'carriers'));
    expect(reaching.map((file) => relative(SRC, file))).toEqual([]);
  });
});

describe('the rooms of the call core', () => {
  const CALL = join(SRC, 'call');
  /** Its sub-rooms by job; its root keeps only the ports other rooms plug into, and the call's clock. */
  const SUB_ROOMS = ['stream', 'intake', 'session', 'downlink', 'outbound', 'functions', 'record', 'watch'];
  const ROOT_FILES = [
    'audio-listener.ts',
    'carrier-port.ts',
    'clock.ts',
    'leg.ts',
    'plugin.ts',
    'recording-port.ts',
  ];

  it('every file of src/call sits in the room of its job', () => {
    const misplaced = sources(CALL)
      .map((file) => relative(CALL, file))
      .filter((path) => {
        const [first, ...rest] = path.split('/');
        return rest.length === 0 ? !ROOT_FILES.includes(first!) : !SUB_ROOMS.includes(first!);
      });
    expect(misplaced).toEqual([]);
  });

  it('only the session holds the agent link: no other file makes or imports one', () => {
    const link = join(CALL, 'session', 'agent-link.ts');
    const holders = sources(SRC).filter((file) => {
      if (file === link || !importsOf(file).includes(link)) return false;
      return /import\s*\{[^}]*(?<!type\s)\bAgentLink\b[^}]*\}\s*from '[^']*agent-link\.js'/s.test(
        readFileSync(file, 'utf8'),
      );
    });
    expect(holders.map((file) => relative(SRC, file))).toEqual(['call/session/session.ts']);
  });
});
