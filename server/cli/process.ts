/** deploy, start, cancel, verify-audit. */
import { readFile } from 'node:fs/promises';
import { type Command, CliError, EXIT, emit, parseArgs, usage } from './args.js';
import { ApiError, gql } from './client.js';
import { Deploy, StartProcess } from '../client/index.js';
import { CancelProcess, VerifyAudit } from './documents.js';

interface SourceFile {
  file: string;
  /** first line of this file in the combined source (1-based) */
  start: number;
  lines: number;
}

/** Joins files into one multi-document source, remembering where each starts for error positions. */
export function combine(files: { file: string; text: string }[]): { source: string; map: SourceFile[] } {
  const texts = files.map((f) => f.text.replace(/\n+$/, ''));
  let start = 1;
  const map = files.map((f, i): SourceFile => {
    const at = { file: f.file, start, lines: texts[i].split('\n').length };
    start += at.lines + 1; // the next file starts after the `---` line
    return at;
  });
  return { source: texts.join('\n---\n'), map };
}

export function locate(map: SourceFile[], line: number | null | undefined): string {
  if (line == null) return map.length === 1 ? map[0].file : map.map((m) => m.file).join(',');
  const f = map.find((m) => line >= m.start && line < m.start + m.lines) ?? map[map.length - 1];
  return `${f.file}:${line - f.start + 1}`;
}

export const deploy: Command = {
  name: 'deploy',
  summary: 'validate and deploy APL files (ToolServers and Processes)',
  help: `abada deploy FILE… [--json]

Deploys every document of the files in one call (a Process may use a ToolServer of another file).
Validation errors print as "file:line: CODE message" and exit 1.`,
  async run(argv, io) {
    const { positionals } = parseArgs(argv, { json: 'boolean' });
    if (!positionals.length) throw usage('deploy needs at least one FILE.');
    const files = await Promise.all(
      positionals.map(async (file) => {
        try {
          return { file, text: await readFile(file, 'utf8') };
        } catch (e) {
          throw new CliError(EXIT.USAGE, `Cannot read ${file}: ${(e as Error).message}`);
        }
      }),
    );
    const { source, map } = combine(files);
    try {
      const d = await gql(io, Deploy, { source });
      emit(io, d.deploy, () => [
        ...d.deploy.toolServers.map((t) => `tool server ${t.name} v${t.version}`),
        ...d.deploy.definitions.map((p) => `process ${p.key} v${p.version} (${p.id})`),
      ]);
    } catch (e) {
      const errors = e instanceof ApiError ? e.error.extensions?.errors : undefined;
      if (!errors?.length) throw e;
      const located = errors.map((x) => ({ ...x, at: locate(map, x.line) }));
      if (io.json) io.out(JSON.stringify({ error: { code: 'VALIDATION_FAILED', errors: located } }, null, 2));
      else for (const x of located) io.err(`${x.at}: ${x.code ?? 'ERROR'} ${x.message}`);
      return EXIT.REFUSED;
    }
  },
};

/** `k=v`: the value as JSON when it parses (numbers, booleans, objects), else the string. */
export function parseVar(kv: string): [string, unknown] {
  const i = kv.indexOf('=');
  if (i <= 0) throw usage(`--var expects key=value, got "${kv}".`);
  const raw = kv.slice(i + 1);
  try {
    return [kv.slice(0, i), JSON.parse(raw)];
  } catch (e) {
    if (!(e instanceof SyntaxError)) throw e;
    return [kv.slice(0, i), raw];
  }
}

export const start: Command = {
  name: 'start',
  summary: 'start a process instance',
  help: `abada start KEY [--var k=v]… [--business-key BK] [--json]

Values parse as JSON when they can (amount=89, vip=true, tags='["a"]'), else they are strings.
Prints the new instance id.`,
  async run(argv, io) {
    const { positionals, flags } = parseArgs(argv, {
      var: 'list',
      'business-key': 'string',
      json: 'boolean',
    });
    if (positionals.length !== 1) throw usage('start needs exactly one process KEY.');
    const variables = Object.fromEntries(((flags.var as string[]) ?? []).map(parseVar));
    const d = await gql(io, StartProcess, {
      key: positionals[0],
      variables,
      businessKey: (flags['business-key'] as string | undefined) ?? null,
    });
    emit(io, d.startProcess, () => [d.startProcess.id]);
  },
};

export const cancel: Command = {
  name: 'cancel',
  summary: 'cancel a process instance (its work is retired)',
  help: 'abada cancel ID --reason TEXT [--json]',
  async run(argv, io) {
    const { positionals, flags } = parseArgs(argv, { reason: 'string', json: 'boolean' });
    if (positionals.length !== 1 || !flags.reason) throw usage('cancel needs an instance ID and --reason.');
    const d = await gql(io, CancelProcess, { id: positionals[0], reason: String(flags.reason) });
    emit(io, d.cancelProcess, () => [`${d.cancelProcess.id} ${d.cancelProcess.state}`]);
  },
};

export const verifyAudit: Command = {
  name: 'verify-audit',
  summary: "recompute an instance's history hash chain",
  help: 'abada verify-audit INSTANCE_ID [--json]\n\nExit 0 when the chain is intact, 1 when a row is broken.',
  async run(argv, io) {
    const { positionals } = parseArgs(argv, { json: 'boolean' });
    if (positionals.length !== 1) throw usage('verify-audit needs one instance ID.');
    const d = await gql(io, VerifyAudit, { id: positionals[0] });
    const v = d.verifyAudit;
    emit(io, v, () => [
      v.valid
        ? `valid: ${v.rows} rows, head ${v.headHash}`
        : `BROKEN at seq ${v.firstBrokenSeq}: ${v.reason ?? 'hash mismatch'} (${v.rows} rows)`,
    ]);
    return v.valid ? EXIT.OK : EXIT.REFUSED;
  },
};
