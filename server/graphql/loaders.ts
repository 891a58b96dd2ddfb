/** Per-request DataLoaders: no N+1 when a query lists tasks with their steps or instances with history. */
import DataLoader from 'dataloader';
import type { EngineContext } from '../engine/common/index.js';
import { latestPositions } from '../engine/events/index.js';
import { historyOf, userTasksOf } from '../engine/instances/index.js';
import { loadSteps } from '../engine/journal/index.js';
import { tasksOfInstances } from '../engine/tasks/index.js';

export type Loaders = ReturnType<typeof createLoaders>;

/** A loader of the rows of each id, `key` naming a row's id. */
function grouped<T>(load: (ids: string[]) => Promise<T[]>, key: (r: T) => string) {
  return new DataLoader(async (ids: readonly string[]) => {
    const m = new Map<string, T[]>(ids.map((id) => [id, []]));
    for (const r of await load([...ids])) m.get(key(r))?.push(r);
    return ids.map((id) => m.get(id) ?? []);
  });
}

export function createLoaders(engine: EngineContext) {
  return {
    stepsByTask: grouped(
      (ids) => loadSteps(engine.db, engine, ids),
      (s) => s.taskId,
    ),
    tasksByInstance: grouped(
      (ids) => tasksOfInstances(engine.db, ids),
      (t) => t.processInstanceId,
    ),
    historyByInstance: grouped(
      (ids) => historyOf(engine.db, ids),
      (h) => h.processInstanceId,
    ),
    userTasksByInstance: grouped(
      (ids) => userTasksOf(engine, ids),
      (u) => u.processInstanceId,
    ),
    /** the stream position of the latest event about an approval or incident */
    eventPosition: new DataLoader(async (ids: readonly string[]) => {
      const positions = await latestPositions(engine.db, ids);
      return ids.map((id) => positions.get(id) ?? 0);
    }),
  };
}
