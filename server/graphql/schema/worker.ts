import { getTask } from '../../engine/tasks/index.js';
import { listWorkers, registerWorker, type WorkerView } from '../../engine/workers/index.js';
import { builder } from '../builder.js';
import { selectEvents } from '../pubsub.js';
import { ExternalTask } from './task.js';

const WorkerHealth = builder.enumType('WorkerHealth', { values: ['ONLINE', 'ERROR', 'OFFLINE'] as const });

const Worker = builder.objectRef<WorkerView>('Worker').implement({
  fields: (t) => ({
    workerId: t.exposeString('workerId'),
    principalId: t.exposeID('principalId'),
    projectId: t.exposeID('projectId', { nullable: true }),
    topics: t.exposeStringList('topics'),
    models: t.exposeStringList('models'),
    health: t.field({ type: WorkerHealth, resolve: (w) => w.health }),
    lastHeartbeatAt: t.field({ type: 'DateTime', nullable: true, resolve: (w) => w.lastHeartbeatAt }),
    lastRejectionAt: t.field({ type: 'DateTime', nullable: true, resolve: (w) => w.lastRejectionAt }),
    lastRejectionReason: t.exposeString('lastRejectionReason', { nullable: true }),
    consecutiveFailures: t.exposeInt('consecutiveFailures'),
  }),
});

const RegisterWorkerInput = builder.inputType('RegisterWorkerInput', {
  fields: (t) => ({
    workerId: t.string({ required: true }),
    topics: t.stringList({ required: true }),
    models: t.stringList(),
  }),
});

builder.queryField('workers', (t) =>
  t.field({
    type: [Worker],
    resolve: (_r, _a, ctx) => listWorkers(ctx.engine, ctx.actor!),
  }),
);

builder.mutationField('registerWorker', (t) =>
  t.field({
    type: Worker,
    authScopes: { worker: true },
    args: { input: t.arg({ type: RegisterWorkerInput, required: true }) },
    resolve: (_r, { input }, ctx) => registerWorker(ctx.engine, ctx.actor!, input),
  }),
);

builder.subscriptionField('taskChanged', (t) =>
  t.field({
    type: ExternalTask,
    args: { processInstanceId: t.arg.id() },
    subscribe: (_r, args, ctx) =>
      selectEvents(ctx.hub.pubsub.subscribe('task'), (e) =>
        (ctx.actor!.projectId === null || e.projectId === ctx.actor!.projectId) &&
        (args.processInstanceId == null || args.processInstanceId === e.processInstanceId)
          ? ctx.hub.share(e, () => getTask(ctx.engine.db, { projectId: null }, e.taskId))
          : null,
      ),
    resolve: (t) => t,
  }),
);
