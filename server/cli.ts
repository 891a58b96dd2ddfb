/**
 * `abada`: the operator's CLI. Engine calls go over GraphQL (ABADA_URL, ABADA_TOKEN) like any client;
 * `migrate` and `rotate-keys` talk to DATABASE_URL directly. Exit codes: 0 ok, 1 refused or invalid,
 * 2 usage, 3 engine unreachable or not authenticated. `--json` prints machine-readable output.
 */
import { approvals, decide, incidents, revoke } from './cli/approvals.js';
import { type Command, CliError, EXIT, type Io } from './cli/args.js';
import { migrate, rotateKeysCommand, worker } from './cli/ops.js';
import { incident, key, price, resume, suspend } from './cli/operators.js';
import { credential, principal } from './cli/principals.js';
import { cancel, deploy, start, verifyAudit } from './cli/process.js';

const COMMANDS: Command[] = [
  deploy,
  start,
  cancel,
  suspend,
  resume,
  principal,
  credential,
  approvals,
  decide,
  revoke,
  incidents,
  incident,
  price,
  key,
  verifyAudit,
  worker,
  migrate,
  rotateKeysCommand,
];

const HELP = `abada — operate an Abada engine

Usage: abada COMMAND [options]   (abada COMMAND --help for its options)

${COMMANDS.map((c) => `  ${c.name.padEnd(14)}${c.summary}`).join('\n')}

Environment: ABADA_URL (engine base URL), ABADA_TOKEN (bearer token); DATABASE_URL for migrate and
rotate-keys. Exit codes: 0 ok, 1 refused/invalid, 2 usage, 3 unreachable/unauthenticated.`;

export async function main(argv: string[], io?: Partial<Io>): Promise<number> {
  const json = argv.includes('--json');
  const ctx: Io = {
    out: (l) => process.stdout.write(`${l}\n`),
    err: (l) => process.stderr.write(`${l}\n`),
    env: process.env,
    stdin: process.stdin,
    json,
    ...io,
  };
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    const cmd = COMMANDS.find((c) => c.name === rest[0]);
    ctx.out(cmd ? cmd.help : HELP);
    return name ? EXIT.OK : EXIT.USAGE;
  }
  const cmd = COMMANDS.find((c) => c.name === name);
  if (!cmd) {
    ctx.err(`Unknown command "${name}".\n\n${HELP}`);
    return EXIT.USAGE;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    ctx.out(cmd.help);
    return EXIT.OK;
  }
  try {
    return (await cmd.run(rest, ctx)) ?? EXIT.OK;
  } catch (e) {
    const err =
      e instanceof CliError ? e : new CliError(EXIT.REFUSED, e instanceof Error ? e.message : String(e));
    if (json) ctx.out(JSON.stringify({ error: { message: err.message, ...err.details } }, null, 2));
    else ctx.err(err.exitCode === EXIT.USAGE ? `${err.message}\n\n${cmd.help}` : err.message);
    return err.exitCode;
  }
}
