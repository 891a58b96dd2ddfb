/** principal create, credential set. */
import { type Command, CliError, EXIT, emit, type Io, parseArgs, usage } from './args.js';
import type { VariablesOf } from '../client/index.js';
import { gql } from './client.js';
import { CreatePrincipal, SetCredential } from './documents.js';

const KINDS = ['worker', 'human', 'admin'];

export const principal: Command = {
  name: 'principal',
  summary: 'create a principal (prints its token once)',
  help: `abada principal create --kind worker|human|admin --name NAME [--group G]… [--topic T]… [--project P] [--json]

Prints the token on stdout, once: only its hash is stored. Needs an admin ABADA_TOKEN.`,
  async run(argv, io) {
    const { positionals, flags } = parseArgs(argv, {
      kind: 'string',
      name: 'string',
      group: 'list',
      topic: 'list',
      project: 'string',
      json: 'boolean',
    });
    if (positionals[0] !== 'create' || positionals.length !== 1)
      throw usage('Usage: abada principal create …');
    const kind = String(flags.kind ?? '').toLowerCase();
    if (!KINDS.includes(kind)) throw usage('--kind must be worker, human or admin.');
    if (!flags.name) throw usage('--name is required.');
    const d = await gql(io, CreatePrincipal, {
      input: {
        kind: kind.toUpperCase() as VariablesOf<typeof CreatePrincipal>['input']['kind'],
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
    return EXIT.OK;
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
    return EXIT.OK;
  },
};
