// `callbridge sim`: runs the local voice agent until SIGINT or SIGTERM.
//   --port N (default 8090)  --host ADDR (default 127.0.0.1)  --scenario FILE  --max-connections N
import { AGENT_PATH } from '../../agent/protocol.js';
import { ConfigError } from '../../errors.js';
import { createLogger } from '../../log.js';
import { loadScenario, type Scenario } from './scenario.js';
import { type LocalAgent, startLocalAgent } from './server.js';

export const DEFAULT_SIM_PORT = 8090;

export const SIM_USAGE = `usage: callbridge sim [--port 8090] [--host 127.0.0.1] [--scenario FILE] [--max-connections N]

Runs the local voice agent (and the speech REST subset callbridge uses) until SIGINT or SIGTERM.
Point a server at it with AGENT_URL=ws://127.0.0.1:8090 AGENT_API_KEY=anything.

  --port N               the port to listen on (default 8090; 0: any free one)
  --host ADDR            the address to listen on (default 127.0.0.1)
  --scenario FILE        a JSON script of the conversation, turn by turn (docs/routes.md)
  --max-connections N    agent sessions open at once at most, the next refused
`;

export interface SimArgs {
  host: string;
  port: number;
  scenarioPath?: string;
  maxConnections?: number;
}

export function parseSimArgs(args: string[]): SimArgs | 'help' {
  const parsed: SimArgs = { host: '127.0.0.1', port: DEFAULT_SIM_PORT };
  for (let i = 0; i < args.length; i++) {
    const flag = args[i]!;
    if (flag === '--help' || flag === '-h') return 'help';
    const value = args[i + 1];
    if (value === undefined || value.startsWith('--')) throw new ConfigError(`sim: ${flag} needs a value`);
    i++;
    switch (flag) {
      case '--port':
        parsed.port = integer(flag, value, 0, 65535);
        break;
      case '--host':
        parsed.host = value;
        break;
      case '--scenario':
        parsed.scenarioPath = value;
        break;
      case '--max-connections':
        parsed.maxConnections = integer(flag, value, 1, 100_000);
        break;
      default:
        throw new ConfigError(
          `sim: unknown option ${flag} (use --port, --host, --scenario, --max-connections)`,
        );
    }
  }
  return parsed;
}

/**
 * Starts the local agent and resolves once a signal has stopped it. A bad option or a failed start
 * is reported in one line on stderr with exit code 2 (usage) or 1 (start), not as a stack trace.
 */
export async function simCommand(args: string[]): Promise<void> {
  let parsed: SimArgs;
  let scenario: Scenario | undefined;
  try {
    const read = parseSimArgs(args);
    if (read === 'help') {
      process.stdout.write(SIM_USAGE);
      return;
    }
    parsed = read;
    if (parsed.scenarioPath !== undefined) scenario = loadScenario(parsed.scenarioPath);
  } catch (err) {
    process.stderr.write(`callbridge sim: ${(err as Error).message}\n`);
    process.exitCode = 2;
    return;
  }
  const logger = createLogger(process.env.LOG_LEVEL ?? 'info');
  let agent: LocalAgent;
  try {
    agent = await startLocalAgent({
      host: parsed.host,
      port: parsed.port,
      logger,
      ...(scenario ? { scenario } : {}),
      ...(parsed.maxConnections !== undefined ? { maxConnections: parsed.maxConnections } : {}),
    });
  } catch (err) {
    process.stderr.write(`callbridge sim: cannot start: ${(err as Error).message}\n`);
    process.exitCode = 1;
    return;
  }
  logger.info(
    { url: `${agent.url}${AGENT_PATH}`, scenario: parsed.scenarioPath },
    `local voice agent at ${agent.url}`,
  );

  await new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      logger.info({ signal }, 'local voice agent stopping');
      agent.close().then(resolve, resolve);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

function integer(flag: string, value: string, min: number, max: number): number {
  const n = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new ConfigError(`sim: ${flag} must be an integer from ${min} to ${max}, got "${value}"`);
  }
  return n;
}
