/** Per-request DataLoaders: no N+1 when a query lists tasks with their steps or instances with history. */
import DataLoader from 'dataloader';
import { asc, inArray } from 'drizzle-orm';
import { externalTasks, history } from '../db/schema.js';
import type { ExternalTaskRow, HistoryRow } from '../db/schema.js';
import type { EngineContext } from '../engine/context.js';
import { loadSteps, type StepView } from '../engine/stepviews.js';

export interface Loaders {
  stepsByTask: DataLoader<string, StepView[]>;
  tasksByInstance: DataLoader<string, ExternalTaskRow[]>;
  historyByInstance: DataLoader<string, HistoryRow[]>;
}

function group<T>(ids: readonly string[], rows: T[], key: (r: T) => string): T[][] {
  const m = new Map<string, T[]>(ids.map((id) => [id, []]));
  for (const r of rows) m.get(key(r))?.push(r);
  return ids.map((id) => m.get(id) ?? []);
}

export function createLoaders(engine: EngineContext): Loaders {
  return {
    stepsByTask: new DataLoader(async (ids) =>
      group(ids, await loadSteps(engine.db, engine, [...ids]), (s) => s.taskId),
    ),
    tasksByInstance: new DataLoader(async (ids) =>
      group(
        ids,
        await engine.db
          .select()
          .from(externalTasks)
          .where(inArray(externalTasks.processInstanceId, [...ids]))
          .orderBy(asc(externalTasks.createdAt)),
        (t) => t.processInstanceId,
      ),
    ),
    historyByInstance: new DataLoader(async (ids) =>
      group(
        ids,
        await engine.db
          .select()
          .from(history)
          .where(inArray(history.processInstanceId, [...ids]))
          .orderBy(asc(history.processInstanceId), asc(history.seq)),
        (h) => h.processInstanceId,
      ),
    ),
  };
}
