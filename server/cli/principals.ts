/** principal create|list|update|disable|rotate, credential set. */
import { type Command, CliError, EXIT, emit, type Flags, type Io, parseArgs, table, usage } from './args.js';
import { CreatePrincipal, SetCredential, type VariablesOf } from '../client/index.js';
import { gql } from './client.js';
import { DisablePrincipal, Principals, RotatePrincipalToken, UpdatePrincipal } from './documents.js';

const KINDS = ['worker', 'human', 'admin'];

type Kind = NonNullable<VariablesOf<typeof Principals>['kind']>;

function kindFlag(value: unknown, required: boolean): Kind | null {
  if (value === undefined && !required) return null;
  const kind = String(value ?? '').toLowerCase();
  if (!KINDS.includes(kind)) throw usage('--kind must be worker, human or admin.');
  return kind.toUpperCase() as Kind;
}

export const principal: Command = {
  name: 'principal',
  summary: 'create, list, update, disable principals; rotate their tokens (admin)',
  help: `abada principal create --kind worker|human|admin --name NAME [--group G]… [--topic T]… [--project P]
abada principal list [--kind worker|human|admin] [--first N] [--after CURSOR]
abada principal update ID [--group G]… [--topic T]… [--clear-groups] [--clear-topics]
abada principal disable ID
abada principal rotate ID
(each takes --json)

create and rotate print the token on stdout, once: only its hash is stored. update replaces the groups
(or topics) given and leaves the others as they are. disable is final: the principal's tokens and open
connections stop at once on every engine. Needs an admin ABADA_TOKEN.`,
  async run(argv, io) {
    const { positionals, flags } = parseArgs(argv, {
      kind: 'string',
      name: 'string',
      group: 'list',
      topic: 'list',
      project: 'string',
      first: 'string',
      after: 'string',
      'clear-groups': 'boolean',
      'clear-topics': 'boolean',
      json: 'boolean',
    });
    const [sub, ...rest] = positionals;
    const run = SUBCOMMANDS[sub ?? ''];
    if (!run) throw usage('Usage: abada principal create|list|update|disable|rotate … (see --help)');
    await run(rest, flags, io);
  },
};

const SUBCOMMANDS: Record<string, (args: string[], flags: Flags, io: Io) => Promise<void>> = {
  async create(args, flags, io) {
    if (args.length) throw usage('Usage: abada principal create --kind … --name …');
    const kind = kindFlag(flags.kind, true)!;
    if (!flags.name) throw usage('--name is required.');
    const d = await gql(io, CreatePrincipal, {
      input: {
        kind,
        name: String(flags.name),
        groups: (flags.group as string[] | undefined) ?? [],
        topics: (flags.topic as string[] | undefined) ?? [],
        projectId: (flags.project as string | undefined) ?? null,
      },
    });
    const p = d.createPrincipal.principal;
    if (!io.json)
      io.err(
        `created ${p.kind} ${p.name} (${p.id}) in project ${p.projectId ?? '*'}; the token is shown once:`,
      );
    emit(io, d.createPrincipal, () => [d.createPrincipal.token]);
  },

  async list(args, flags, io) {
    if (args.length) throw usage('principal list takes no arguments.');
    const first = flags.first === undefined ? null : Number(flags.first);
    if (first !== null && !Number.isInteger(first)) throw usage('--first must be a whole number.');
    const d = await gql(io, Principals, {
      kind: kindFlag(flags.kind, false),
      first,
      after: (flags.after as string | undefined) ?? null,
    });
    const { totalCount, pageInfo } = d.principals;
    const nodes = d.principals.edges.map((e) => e.node);
    emit(io, { totalCount, ...pageInfo, principals: nodes }, () => [
      ...table([
        ['ID', 'KIND', 'NAME', 'PROJECT', 'STATE', 'GROUPS/TOPICS'],
        ...nodes.map((p) => [
          p.id,
          p.kind,
          p.name,
          p.projectId ?? '*',
          p.disabled ? 'disabled' : 'enabled',
          (p.kind === 'WORKER' ? p.topics : p.groups).join(',') || '-',
        ]),
      ]),
      ...(pageInfo.hasNextPage ? [`(${totalCount} in all; next page: --after ${pageInfo.endCursor})`] : []),
    ]);
  },

  async update(args, flags, io) {
    if (args.length !== 1) throw usage('Usage: abada principal update ID [--group G]… [--topic T]…');
    const list = (name: 'group' | 'topic', clear: boolean) =>
      clear ? [] : ((flags[name] as string[] | undefined) ?? null);
    const groups = list('group', flags['clear-groups'] === true);
    const topics = list('topic', flags['clear-topics'] === true);
    if (groups === null && topics === null)
      throw usage('Say what changes: --group/--clear-groups or --topic/--clear-topics.');
    const d = await gql(io, UpdatePrincipal, { input: { id: args[0], groups, topics } });
    const p = d.updatePrincipal;
    emit(io, p, () => [
      `${p.kind} ${p.name} (${p.id}): groups ${p.groups.join(',') || '-'}; topics ${p.topics.join(',') || '-'}`,
    ]);
  },

  async disable(args, _flags, io) {
    if (args.length !== 1) throw usage('Usage: abada principal disable ID');
    const d = await gql(io, DisablePrincipal, { id: args[0] });
    const p = d.disablePrincipal;
    emit(io, p, () => [`${p.kind} ${p.name} (${p.id}) disabled at ${p.disabledAt}`]);
  },

  async rotate(args, _flags, io) {
    if (args.length !== 1) throw usage('Usage: abada principal rotate ID');
    const d = await gql(io, RotatePrincipalToken, { id: args[0] });
    const p = d.rotatePrincipalToken.principal;
    if (!io.json)
      io.err(`rotated the token of ${p.kind} ${p.name} (${p.id}); the old one no longer works. Shown once:`);
    emit(io, d.rotatePrincipalToken, () => [d.rotatePrincipalToken.token]);
  },
};

/** Reads the secret from stdin (piped, or typed without echo on a terminal). */
async function readSecret(io: Io, name: string): Promise<string> {
  const input = io.stdin as NodeJS.ReadStream;
  if (input.isTTY && typeof input.setRawMode === 'function') {
    io.err(`Secret for ${name} (not echoed), then Enter:`);
    input.setRawMode(true);
    input.resume();
    return new Promise((resolve, reject) => {
      let s = '';
      const onData = (b: Buffer) => {
        for (const ch of b.toString('utf8')) {
          if (ch === '\r' || ch === '\n') {
            input.setRawMode(false);
            input.pause();
            input.off('data', onData);
            resolve(s);
            return;
          }
          if (ch === '\u0003') {
            input.setRawMode(false);
            reject(new CliError(EXIT.USAGE, 'Interrupted.'));
            return;
          }
          if (ch === '\u007f') s = s.slice(0, -1);
          else s += ch;
        }
      };
      input.on('data', onData);
    });
  }
  const chunks: Buffer[] = [];
  for await (const c of input) chunks.push(Buffer.from(c as Buffer));
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

export const credential: Command = {
  name: 'credential',
  summary: 'store a tool-server secret (read from stdin, never from argv)',
  help: `abada credential set NAME [--json]

The secret is read from stdin, e.g.  printf %s "$CRM_TOKEN" | abada credential set crm-token
(never pass it as an argument: argv is visible to every user of the machine).`,
  async run(argv, io) {
    const { positionals } = parseArgs(argv, { json: 'boolean' });
    if (positionals[0] !== 'set' || positionals.length !== 2)
      throw usage('Usage: abada credential set NAME (secret on stdin).');
    const name = positionals[1];
    const secret = await readSecret(io, name);
    if (!secret) throw usage('The secret read from stdin is empty.');
    await gql(io, SetCredential, { name, secret });
    emit(io, { name, stored: true }, () => [`credential ${name} stored`]);
  },
};
