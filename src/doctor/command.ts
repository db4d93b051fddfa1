// `callbridge doctor [--timeout-ms N]`: prints one line per check and exits 0 when nothing failed,
// 1 when something did, 2 on a usage error.
import { parseArgs } from 'node:util';
import { DEFAULT_CHECK_TIMEOUT_MS, runDoctor } from './doctor.js';
import { exitCodeOf, formatLine } from './report.js';

export interface DoctorIo {
  stdout(text: string): void;
  stderr(text: string): void;
  env: Record<string, string | undefined>;
  cwd: string;
}

const processIo: DoctorIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
  cwd: process.cwd(),
};

const USAGE = `usage: callbridge doctor [--timeout-ms N]

Checks the configuration, secrets and reachability of the configured hosts, from the same
environment the server reads; one line per check, exit 1 when any failed.

  --timeout-ms N    how long each network check may take (default ${DEFAULT_CHECK_TIMEOUT_MS})`;

export async function doctorCommand(args: string[], io: DoctorIo = processIo): Promise<number> {
  let values: { 'timeout-ms'?: string; help?: boolean };
  try {
    values = parseArgs({
      args,
      options: { 'timeout-ms': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (err) {
    io.stderr(`callbridge doctor: ${(err as Error).message.split('. ')[0]}\n${USAGE}\n`);
    return 2;
  }
  if (values.help === true) {
    io.stdout(`${USAGE}\n`);
    return 0;
  }
  const timeoutText = values['timeout-ms'];
  if (timeoutText !== undefined && !/^[1-9]\d{0,5}$/.test(timeoutText)) {
    io.stderr(
      `callbridge doctor: --timeout-ms must be a whole number of milliseconds, got "${timeoutText}"\n`,
    );
    return 2;
  }
  const lines = await runDoctor(io.env, {
    cwd: io.cwd,
    timeoutMs: timeoutText === undefined ? DEFAULT_CHECK_TIMEOUT_MS : Number(timeoutText),
  });
  for (const line of lines) io.stdout(`${formatLine(line)}\n`);
  return exitCodeOf(lines);
}
