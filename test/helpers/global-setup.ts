/**
 * One PostgreSQL for the whole run: the server DATABASE_URL names, else an embedded one started here.
 * Migrations run once into a template database; each test file clones it (`CREATE DATABASE … TEMPLATE`),
 * so files run in parallel on isolated databases in milliseconds.
 */
import { appendFileSync, chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres } from '../../server/db/client.js';
import { runMigrations } from '../../server/db/migrate.js';
import { buildBundles } from './bundles.js';

declare module 'vitest' {
  export interface ProvidedContext {
    pgServerUrl: string;
    templateDb: string;
  }
}

const PG_LOG = path.resolve('test-results/postgres.log');

/** Prints the lines of the shared server's log that say a backend died or the server reset. */
function reportCrashes() {
  let log = '';
  try {
    log = readFileSync(PG_LOG, 'utf8');
  } catch {
    return;
  }
  const lines = log.split('\n');
  const at = lines.findIndex((l) => /terminated by signal|PANIC:|all server processes terminated/.test(l));
  if (at < 0) return;
  console.error(`[global-setup] the shared PostgreSQL crashed during the run (${PG_LOG}):`);
  console.error(lines.slice(Math.max(0, at - 30), at + 10).join('\n'));
}

export default async function setup(project: TestProject) {
  let serverUrl = process.env.DATABASE_URL;
  let stop: (() => Promise<void>) | null = null;
  let dir: string | null = null;
  if (!serverUrl) {
    dir = mkdtempSync(path.join(os.tmpdir(), 'abada-test-pg-'));
    chmodSync(dir, 0o755); // the embedded server runs as its own OS user when we are root
    // The server's own log, kept whole: if it crashes mid-run (a backend killed or faulting, "the database
    // system is in recovery mode" in every test after), teardown prints why.
    mkdirSync(path.dirname(PG_LOG), { recursive: true });
    rmSync(PG_LOG, { force: true });
    const embedded = await startEmbeddedPostgres(path.join(dir, 'data'), {
      log: (line) => appendFileSync(PG_LOG, line.endsWith('\n') ? line : `${line}\n`),
    });
    serverUrl = embedded.url;
    stop = embedded.stop;
  }
  const templateDb = `abada_template_${process.pid}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${templateDb}`);
  await admin.query(`CREATE DATABASE ${templateDb}`);
  await admin.end();
  const u = new URL(serverUrl);
  u.pathname = `/${templateDb}`;
  await runMigrations(u.toString());
  project.provide('pgServerUrl', serverUrl);
  project.provide('templateDb', templateDb);
  const bundles = await buildBundles();
  project.provide('bundles', bundles.paths);
  return async () => {
    bundles.remove();
    if (stop) await stop();
    if (dir) reportCrashes();
    if (dir) rmSync(dir, { recursive: true, force: true });
  };
}
