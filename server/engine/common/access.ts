/** Who may see what: the actor's project, and ids that can name a row at all. */
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
