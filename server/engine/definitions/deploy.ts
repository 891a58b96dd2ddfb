/**
 * Deploying APL: validate everything, then in one transaction upsert the tool servers and freeze each
 * process as a new definition version. Running instances keep the version they started with.
 */
import { and, desc, eq, sql } from 'drizzle-orm';
import { credentials, type DefinitionRow, definitions, toolServers } from '../../db/schema.js';
import { EngineError, invalid } from '../../errors.js';
import { APL } from './apl/errors.js';
import { validateSource } from './apl/validate.js';
import { canonicalJson, sha256Hex } from '../../shared/canonical.js';
import { type Actor, type EngineContext, type Executor, actorProject } from '../common/index.js';
import { execute, transaction } from '../../db/pg.js';
import { LATEST_DEFINITION } from '../../db/statements/start.js';
import { pricedModels } from '../prices/index.js';

/** A deployed version as read back: its row without the source text and the deployer. */
export type DefinitionView = Omit<DefinitionRow, 'source' | 'deployedBy'>;
export type ToolServerView = typeof toolServers.$inferSelect;

function requireAdmin(actor: Actor, what: string) {
  if (actor.kind !== 'ADMIN') throw new EngineError('FORBIDDEN', `Only an admin can ${what}.`);
}

const MAX_SOURCE_BYTES = 512 * 1024;

export async function deploy(ctx: EngineContext, actor: Actor, source: string) {
  requireAdmin(actor, 'deploy definitions');
  const projectId = actorProject(actor);
  if (Buffer.byteLength(source, 'utf8') > MAX_SOURCE_BYTES) {
    const message = `The source is larger than ${MAX_SOURCE_BYTES} bytes; split it.`;
    const errors = [{ code: APL.YAML_TOO_LARGE, path: '', line: null, message: 'Source too large.' }];
    throw new EngineError('VALIDATION_FAILED', message, { errors });
  }
  return transaction(ctx.db, async (tx) => {
    // One deployment per project at a time, so version numbers and tool server specs never race.
    await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtext(${`deploy:${projectId}`}))`);
    const existing = await tx.select().from(toolServers).where(eq(toolServers.projectId, projectId));
    const keys = await tx
      .selectDistinct({ key: definitions.key })
      .from(definitions)
      .where(eq(definitions.projectId, projectId));
    const result = validateSource(source, {
      toolServers: new Map(existing.map((s) => [s.name, s.spec])),
      processKeys: new Set(keys.map((k) => k.key)),
      allowedModels: ctx.config.allowedModels,
      allowedTools: ctx.config.allowedTools,
      pricedModels: await pricedModels(tx),
    });
    if (!result.ok) {
      throw new EngineError(
        'VALIDATION_FAILED',
        `The deployment has ${result.errors.length} error(s); nothing was deployed.`,
        { errors: result.errors },
      );
    }
    // each tool server whose spec changed is upserted (version + 1); an unchanged one is kept as it is
    const servers: ToolServerView[] = [];
    for (const spec of result.deployment.toolServers) {
      const prev = existing.find((s) => s.name === spec.name);
      if (prev && canonicalJson(prev.spec) === canonicalJson(spec)) {
        servers.push(prev);
        continue;
      }
      const [row] = await tx
        .insert(toolServers)
        .values({ projectId, name: spec.name, spec, version: 1 })
        .onConflictDoUpdate({
          target: [toolServers.projectId, toolServers.name],
          set: { spec, version: sql`${toolServers.version} + 1`, updatedAt: sql`now()` },
        })
        .returning();
      servers.push(row);
    }
    // a new version of each process whose frozen form changed
    const defs: DefinitionView[] = [];
    for (const proc of result.deployment.processes) {
      const latest = await latestDefinition(tx, projectId, proc.key);
      // Re-deploying the same frozen process is a no-op: CI pipelines deploy on every run.
      if (latest && canonicalJson(latest.spec) === canonicalJson(proc)) {
        defs.push(latest);
        continue;
      }
      const [row] = await tx
        .insert(definitions)
        .values({
          projectId,
          key: proc.key,
          version: (latest?.version ?? 0) + 1,
          spec: proc,
          source,
          sourceSha256: sha256Hex(source),
          deployedBy: actor.principalId,
        })
        .returning();
      defs.push(toDefinitionView(row));
    }
    return { definitions: defs, toolServers: servers };
  });
}

function toDefinitionView({ source, deployedBy, ...view }: DefinitionRow): DefinitionView {
  return view;
}

export async function listDefinitions(ctx: EngineContext, actor: Actor, key?: string | null) {
  const projectId = actorProject(actor);
  const rows = await ctx.db
    .select()
    .from(definitions)
    .where(and(eq(definitions.projectId, projectId), key ? eq(definitions.key, key) : undefined))
    .orderBy(definitions.key, desc(definitions.version));
  return rows.map(toDefinitionView);
}

export async function listToolServers(ctx: EngineContext, actor: Actor) {
  return ctx.db
    .select()
    .from(toolServers)
    .where(eq(toolServers.projectId, actorProject(actor)))
    .orderBy(toolServers.name);
}

/** Each deployed version's view by id, once read: a deployed version never changes (bounded). */
const deployed = new Map<string, DefinitionView>();
const DEPLOYED_KEPT = 5000;

async function deployedVersion(ex: Executor, id: string) {
  const known = deployed.get(id);
  if (known) return known;
  const [row] = await ex.select().from(definitions).where(eq(definitions.id, id));
  const view = toDefinitionView(row);
  if (deployed.size >= DEPLOYED_KEPT) deployed.delete(deployed.keys().next().value as string);
  deployed.set(view.id, view);
  return view;
}

/** The latest version of a process in a project (what startProcess runs). */
export async function latestDefinition(ex: Executor, projectId: string, key: string) {
  const [latest] = await execute(ex, LATEST_DEFINITION, [projectId, key]);
  return latest ? deployedVersion(ex, latest.id) : null;
}

export async function readDefinitionSpec(ex: Executor, definitionId: string) {
  return (await deployedVersion(ex, definitionId)).spec;
}

export async function setCredential(ctx: EngineContext, actor: Actor, name: string, secret: string) {
  requireAdmin(actor, 'set credentials');
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/.test(name)) {
    throw invalid('A credential name uses letters, digits and ._- (up to 100).', 'name', 'invalid name');
  }
  if (secret.length === 0 || secret.length > 16 * 1024) {
    throw invalid('A secret must be 1 to 16384 characters.', 'secret', 'invalid length');
  }
  const sealed = ctx.sealer.seal(secret);
  await ctx.db
    .insert(credentials)
    .values({ projectId: actorProject(actor), name, secretEnc: sealed, keyId: ctx.sealer.currentKeyId })
    .onConflictDoUpdate({
      target: [credentials.projectId, credentials.name],
      set: { secretEnc: sealed, keyId: ctx.sealer.currentKeyId, updatedAt: sql`now()` },
    });
  return true;
}

export async function readCredential(ex: Executor, ctx: EngineContext, projectId: string, name: string) {
  const [row] = await ex
    .select()
    .from(credentials)
    .where(and(eq(credentials.projectId, projectId), eq(credentials.name, name)))
    .limit(1);
  return row ? ctx.sealer.open(row.secretEnc) : null;
}
