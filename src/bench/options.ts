// The options of a bench sub-command (`bench campaign`, `bench upload`, `bench console`): parsed
// strictly, with --help, and a usage error answered the same way by each.
import { parseArgs, type ParseArgsConfig } from 'node:util';

type Options = NonNullable<ParseArgsConfig['options']>;
type Parsed<O extends Options> = ReturnType<typeof parseArgs<{ args: string[]; options: O; strict: true }>>;

/** Exit status of a usage error. */
export const USAGE_ERROR = 2;

/**
 * The command's option values, or the exit status to return at once: 0 after --help printed the
 * usage, 2 after a usage error was written with it.
 */
export function parseBenchOptions<O extends Options>(
  command: string,
  args: string[],
  options: O,
  usage: string,
): Parsed<O>['values'] | number {
  let values: Parsed<O>['values'] & { help?: boolean };
  try {
    const withHelp = { ...options, help: { type: 'boolean' as const } };
    values = parseArgs({ args, options: withHelp, strict: true }).values as typeof values;
  } catch (err) {
    return usageError(command, usage, (err as Error).message);
  }
  if (values.help) {
    process.stdout.write(usage);
    return 0;
  }
  return values;
}

/** Writes the usage (after `message`, when given) to stderr; the exit status of a usage error. */
export function usageError(command: string, usage: string, message?: string): number {
  process.stderr.write(message === undefined ? usage : `callbridge ${command}: ${message}\n${usage}`);
  return USAGE_ERROR;
}
