/** migrate, rotate-keys (direct database access), worker. */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, loadConfig } from '../config.js';
import { connect } from '../db/client.js';
import { runMigrations } from '../db/migrate.js';
import { Sealer } from '../engine/common/index.js';
import { countStale, rotateKeys } from '../engine/keys/index.js';
import { type Command, CliError, EXIT, emit, type Io, parseArgs, usage } from './args.js';

function databaseUrl(io: Io): string {
  const url = io.env.DATABASE_URL?.trim();
  if (!url)
    throw usage('Set DATABASE_URL to the PostgreSQL the engine uses (this command talks to it directly).');
  return url;
}

function unreachable(e: unknown, what: string): CliError {
  if (e instanceof CliError) return e;
  const err = e as { code?: string; message?: string };
  const network = ['ECONNREFUSED', 'ENOTFOUND', 'ETIMEDOUT', '28P01', '3D000'].includes(err.code ?? '');
  return new CliError(network ? EXIT.UNREACHABLE : EXIT.REFUSED, `${what}: ${err.message ?? String(e)}`);
}

export const migrate: Command = {
  name: 'migrate',
  summary: 'apply the committed migrations to DATABASE_URL',
  help: `abada migrate [--json]

Runs drizzle/ migrations under the same advisory lock the engine takes at start, so it is safe while
engines start or run. Needs DATABASE_URL.`,
  async run(argv, io) {
    parseArgs(argv, { json: 'boolean' });
    await runMigrations(databaseUrl(io)).catch((e: unknown) => {
      throw unreachable(e, 'migration failed');
    });
    emit(io, { migrated: true }, () => ['migrations applied']);
  },
};

export const rotateKeysCommand: Command = {
  name: 'rotate-keys',
  summary: 're-seal every encrypted column with the current key',
  help: `abada rotate-keys [--batch N] [--dry-run] [--json]

Reads the keys like the engine (ABADA_ENCRYPTION_KEY with ABADA_ENCRYPTION_KEY_ID, old ones in
ABADA_ENCRYPTION_OLD_KEYS) and re-seals credentials, step payloads, approval arguments, edited
arguments and webhook secrets sealed with an old key. Idempotent; safe while engines run. Needs
DATABASE_URL.`,
  async run(argv, io) {
    const { flags } = parseArgs(argv, { batch: 'string', 'dry-run': 'boolean', json: 'boolean' });
    const url = databaseUrl(io);
    let sealer: Sealer;
    try {
      sealer = new Sealer(loadConfig(io.env).encryption);
    } catch (e) {
      if (e instanceof ConfigError) throw usage(e.message);
      throw e;
    }
    const batch = flags.batch ? Number(flags.batch) : 500;
    if (!Number.isInteger(batch) || batch < 1) throw usage('--batch must be a positive integer.');
    const db = connect(url, { max: 2 });
    try {
      if (flags['dry-run']) {
        const stale = await countStale(db.db, sealer);
        emit(io, { keyId: sealer.currentKeyId, stale }, () =>
          stale.map((s) => `${s.table}: ${s.rows} rows to re-seal with ${sealer.currentKeyId}`),
        );
        return;
      }
      const report = await rotateKeys(db.db, sealer, {
        batch,
        onBatch: (table, n) => !io.json && io.err(`${table}: re-sealed ${n}`),
      });
      emit(io, report, () => [
        ...report.tables.map((t) => `${t.table}: ${t.rows} rows re-sealed`),
        `done: ${report.total} rows now sealed with ${report.keyId}`,
      ]);
    } catch (e) {
      throw unreachable(e, 'rotation failed');
    } finally {
      await db.close();
    }
  },
};

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export const worker: Command = {
  name: 'worker',
  summary: 'run the Agent Worker (same as npm run worker)',
  help: `abada worker

Runs the first-party Agent Worker in the foreground, configured by ABADA_URL, ABADA_TOKEN (a worker
token; or ABADA_OIDC_ISSUER with ABADA_WORKER_OIDC_CLIENT_ID/_SECRET), ABADA_WORKER_ID, ABADA_WORKER_CONCURRENCY and the model variables (docs/operations.md).
SIGINT/SIGTERM drain it gracefully.`,
  async run(argv) {
    parseArgs(argv, {});
    const main = path.join(root, 'server/worker/main.ts');
    if (!existsSync(main)) throw new CliError(EXIT.USAGE, 'The Agent Worker is not part of this build.');
    // Its own process, as `npm run worker` runs it: the worker owns its signal handling and exit code.
    const child = spawn(process.execPath, ['--import', 'tsx', main], { stdio: 'inherit', cwd: root });
    const forward = (s: NodeJS.Signals) => child.kill(s);
    process.on('SIGINT', forward);
    process.on('SIGTERM', forward);
    return new Promise((resolve) => child.on('exit', (code, signal) => resolve(code ?? (signal ? 128 : 1))));
  },
};
