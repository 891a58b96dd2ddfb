/** Who may see what: the actor's project, and ids that can name a row at all. */
import { EngineError } from '../../errors.js';
import type { Actor } from './context.js';

/** The project an actor works in; admins and humans always have one, a global worker may not. */
export function actorProject(actor: Actor): string {
  return actor.projectId ?? 'default';
}

/** Whether the actor may see rows of this project. */
export function sameProject(actor: Actor, projectId: string | null): boolean {
  return actor.projectId === null || actor.projectId === projectId;
}

/** Whether a string can be a row id (a UUID); anything else names no row. */
export function isUuid(id: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id);
}

/** An admin with no memberships acting for the system: the engine, the bootstrap admin, a start-up sweep. */
export function systemAdmin(principalId: string, name: string, projectId: string | null): Actor {
  return { principalId, kind: 'ADMIN', name, projectId, groups: [], topics: [] };
}

/** FORBIDDEN unless the actor is an admin: "Only an admin can <doing>." */
export function requireAdmin(actor: Actor, doing: string): void {
  if (actor.kind !== 'ADMIN') throw new EngineError('FORBIDDEN', `Only an admin can ${doing}.`);
}

/** A row without the named fields: what a view leaves out of the row it shows. */
export function omit<T extends object, K extends keyof T>(row: T, keys: readonly K[]): Omit<T, K> {
  const view = { ...row };
  for (const k of keys) delete view[k];
  return view;
}
