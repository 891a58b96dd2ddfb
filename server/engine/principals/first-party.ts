/**
 * First-party workers registered at start (SPEC §15.2): each ABADA_FIRST_PARTY_WORKERS entry becomes a
 * global WORKER principal signing in as its OpenID client. The sweep takes the migrations' advisory lock
 * (transaction-scoped), so engines starting together register each worker once. A client id another
 * principal holds stops the start with what to fix; a disabled first-party worker stays disabled.
 */
import { eq, sql } from 'drizzle-orm';
import { type FirstPartyWorker, ConfigError } from '../../config.js';
import { transaction } from '../../db/pg.js';
import { MIGRATION_LOCK } from '../../db/migrate.js';
import { type Principal, principals } from '../../db/schema.js';
import { sha256Hex } from '../../shared/canonical.js';
import { type EngineContext, type Tx, systemAdmin } from '../common/index.js';
import { notify } from '../events/index.js';
import { newToken } from './principals.js';
import { BOOTSTRAP_ADMIN_ID, recordPrincipalEvent, sameList, setPrincipal } from './views.js';

/** Who the principals' record names for the sweep's changes. */
const SWEEP = systemAdmin(BOOTSTRAP_ADMIN_ID, 'ABADA_FIRST_PARTY_WORKERS', null);

/** Registers the first-party workers (idempotent); throws ConfigError for an entry it cannot honour. */
export async function registerFirstPartyWorkers(ctx: EngineContext, workers: FirstPartyWorker[]) {
  const result = { created: [] as string[], updated: [] as string[], unchanged: [] as string[] };
  if (workers.length === 0) return result;
  await transaction(ctx.db, async (tx) => {
    await tx.execute(sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`);
    for (const w of workers) result[await registerOne(tx, w)].push(w.name);
  });
  return result;
}

async function registerOne(tx: Tx, w: FirstPartyWorker): Promise<'created' | 'updated' | 'unchanged'> {
  const [row] = await tx
    .select()
    .from(principals)
    .where(eq(principals.oidcClientId, w.clientId))
    .for('update');
  if (!row) {
    const [created] = await tx
      .insert(principals)
      .values({
        kind: 'WORKER',
        name: w.name,
        topics: w.topics,
        projectId: null,
        // nobody knows this token: the worker signs in with its client credentials
        tokenHash: sha256Hex(newToken()),
        createdBy: BOOTSTRAP_ADMIN_ID,
        oidcClientId: w.clientId,
      })
      .returning();
    await recordPrincipalEvent(tx, SWEEP, created, 'CREATED');
    return 'created';
  }
  refuseForeign(row, w);
  if (row.disabledAt || (sameList(row.topics, w.topics) && row.name === w.name)) return 'unchanged';
  const after = await setPrincipal(tx, row.id, { name: w.name, topics: w.topics });
  await recordPrincipalEvent(tx, SWEEP, after, 'UPDATED', { before: row, after });
  await notify(tx, { type: 'principal', principalId: after.id, change: 'updated' });
  return 'updated';
}

function refuseForeign(row: Principal, w: FirstPartyWorker): void {
  if (row.kind === 'WORKER' && row.projectId === null) return;
  throw new ConfigError(
    `ABADA_FIRST_PARTY_WORKERS entry "${w.name}": the OpenID client "${w.clientId}" already signs in as ` +
      `the ${row.kind.toLowerCase()} principal "${row.name}" of project ${row.projectId ?? '*'}. Give the ` +
      'first-party worker a client of its own, or clear that principal’s oidcClientId (updatePrincipal).',
  );
}
