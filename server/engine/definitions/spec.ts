import { eq } from 'drizzle-orm';
import { definitions } from '../../db/schema.js';
import type { FrozenProcess } from '../../shared/types.js';
import type { Executor } from '../common/index.js';

// Definition versions never change once deployed, so their specs can be cached without invalidation.
const cache = new Map<string, FrozenProcess>();

export async function readDefinitionSpec(ex: Executor, definitionId: string): Promise<FrozenProcess> {
  const hit = cache.get(definitionId);
  if (hit) return hit;
  const [row] = await ex
    .select({ spec: definitions.spec })
    .from(definitions)
    .where(eq(definitions.id, definitionId));
  if (cache.size > 5000) cache.clear();
  cache.set(definitionId, row.spec);
  return row.spec;
}
