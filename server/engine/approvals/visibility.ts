/** The rule of who may see an approval. */
import type { ApprovalRow } from '../../db/schema.js';
import type { Actor } from '../common/index.js';

/** Whether an actor may see an approval: its project, and for humans one of its candidate groups (any level). */
export function maySeeApproval(
  actor: Actor,
  a: Pick<ApprovalRow, 'projectId' | 'levels' | 'candidateGroups'>,
): boolean {
  if (actor.projectId !== null && actor.projectId !== a.projectId) return false;
  if (actor.kind === 'ADMIN') return true;
  if (actor.kind !== 'HUMAN') return false;
  const groups = new Set([...a.candidateGroups, ...a.levels.flat()]);
  return actor.groups.some((g) => groups.has(g));
}
