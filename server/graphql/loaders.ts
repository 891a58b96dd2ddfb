/** Per-request DataLoaders: no N+1 when a query lists tasks with their steps or instances with history. */
import DataLoader from 'dataloader';
import type { EngineContext } from '../engine/common/index.js';
import { latestPositions } from '../engine/events/index.js';
import { historyOf, userTasksOf } from '../engine/instances/index.js';
import { loadSteps } from '../engine/journal/index.js';
import { tasksOfInstances } from '../engine/tasks/index.js';

export type Loaders = ReturnType<typeof createLoaders>;

/** A loader of the rows of each id, their field `key` naming the id. */
function grouped<K extends string, T extends Record<K, string>>(
  key: K,
  load: (ids: string[]) => Promise<T[]>,
) {
  return new DataLoader(async (ids: readonly string[]) => {
    const m = new Map<string, T[]>(ids.map((id) => [id, []]));
    for (const r of await load([...ids])) m.get(r[key])?.push(r);
    return ids.map((id) => m.get(id) ?? []);
  });
}

export function createLoaders(engine: EngineContext) {
  return {
    stepsByTask: grouped('taskId', (ids) => loadSteps(engine.db, engine, ids)),
    tasksByInstance: grouped('processInstanceId', (ids) => tasksOfInstances(engine.db, ids)),
    historyByInstance: grouped('processInstanceId', (ids) => historyOf(engine.db, ids)),
    userTasksByInstance: grouped('processInstanceId', (ids) => userTasksOf(engine, ids)),
    /** the stream position of the latest event about an approval or incident */
    eventPosition: new DataLoader(async (ids: readonly string[]) => {
      const positions = await latestPositions(engine.db, ids);
      return ids.map((id) => positions.get(id) ?? 0);
    }),
  };
}
