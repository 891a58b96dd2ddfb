/** Argument parsing, exit codes and output shared by the CLI commands. */

/** 0 ok, 1 refused or invalid, 2 usage, 3 unreachable or not authenticated. */
export const EXIT = { OK: 0, REFUSED: 1, USAGE: 2, UNREACHABLE: 3 } as const;

export class CliError extends Error {
  override name = 'CliError';
  constructor(
    readonly exitCode: number,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

export const usage = (message: string) => new CliError(EXIT.USAGE, message);

export type Flags = Record<string, string | boolean | string[] | undefined>;

/** Parses `--name value`, `--name=value`, repeated list flags and short aliases (`-m`). */
export function parseArgs(
  argv: string[],
  spec: Record<string, 'string' | 'boolean' | 'list'>,
  aliases: Record<string, string> = {},
): { positionals: string[]; flags: Flags } {
  const flags: Flags = {};
  const positionals: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith('-') || arg === '-') {
      positionals.push(arg);
      continue;
    }
    const [, given, inline] = /^--?([^=]*)(?:=(.*))?$/s.exec(arg)!;
    const name = aliases[given] ?? given;
    let value: string | undefined = inline;
    const kind = spec[name];
    if (!kind) throw usage(`Unknown option ${arg}.`);
    if (kind === 'boolean') {
      flags[name] = value === undefined ? true : value !== 'false';
      continue;
    }
    if (value === undefined) {
      value = argv[++i];
      if (value === undefined) throw usage(`${arg} needs a value.`);
    }
    if (kind === 'list') flags[name] = [...((flags[name] as string[] | undefined) ?? []), value];
    else flags[name] = value;
  }
  return { positionals, flags };
}

export interface Io {
  out(line: string): void;
  err(line: string): void;
  json: boolean;
  env: Record<string, string | undefined>;
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
}

/** Prints `value` as JSON under --json, else the human lines. */
export function emit(io: Io, value: unknown, human: () => string[]) {
  if (io.json) io.out(JSON.stringify(value, null, 2));
  else for (const l of human()) io.out(l);
}

/** Left-aligned columns for list output. */
export function table(rows: string[][]): string[] {
  if (!rows.length) return [];
  const widths = rows[0].map((_c, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd(),
  );
}

export interface Command {
  name: string;
  summary: string;
  help: string;
  /** The exit code; none when the command succeeded. */
  run(argv: string[], io: Io): Promise<number | undefined>;
}
