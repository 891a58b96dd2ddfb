/** Per-request DataLoaders: no N+1 when a query lists tasks with their steps or instances with history. */
import DataLoader from 'dataloader';
import {
  type HistoryEventView,
  historyOf,
  type UserTaskView,
  userTasksOf,
} from '../engine/instances/index.js';
import { type TaskView, tasksOfInstances } from '../engine/tasks/index.js';
import type { EngineContext } from '../engine/common/index.js';
import { latestPositions } from '../engine/events/index.js';
import { loadSteps, type StepView } from '../engine/journal/index.js';

export interface Loaders {
  stepsByTask: DataLoader<string, StepView[]>;
  tasksByInstance: DataLoader<string, TaskView[]>;
  historyByInstance: DataLoader<string, HistoryEventView[]>;
  userTasksByInstance: DataLoader<string, UserTaskView[]>;
  /** the stream position of the latest event about an approval or incident */
  eventPosition: DataLoader<string, number>;
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
      group(ids, await tasksOfInstances(engine.db, ids), (t) => t.processInstanceId),
    ),
    historyByInstance: new DataLoader(async (ids) =>
      group(ids, await historyOf(engine.db, ids), (h) => h.processInstanceId),
    ),
    userTasksByInstance: new DataLoader(async (ids) =>
      group(ids, await userTasksOf(engine, [...ids]), (u) => u.processInstanceId),
    ),
    eventPosition: new DataLoader(async (ids) => {
      const positions = await latestPositions(engine.db, ids);
      return ids.map((id) => positions.get(id) ?? 0);
    }),
  };
}
