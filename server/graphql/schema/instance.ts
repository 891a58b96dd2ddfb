import type { AuditVerification as AuditShape } from '../../engine/history/index.js';
import {
  type HistoryEventView,
  type InstanceView,
  loadInstanceFor,
  startProcess,
  type UserTaskView,
  cancelProcess,
  resumeProcess,
  suspendProcess,
  listInstances,
  verifyAudit,
  completeUserTask,
} from '../../engine/instances/index.js';
import { builder, byId, connection, pageArgs } from '../builder.js';
import { ExternalTask } from './task.js';

export const InstanceState = builder.enumType('InstanceState', {
  values: ['ACTIVE', 'SUSPENDED', 'COMPLETED', 'CANCELLED', 'FAILED'] as const,
});
const UserTaskState = builder.enumType('UserTaskState', {
  values: ['OPEN', 'COMPLETED', 'CANCELLED'] as const,
});

export const HistoryEvent = builder.objectRef<HistoryEventView>('HistoryEvent').implement({
  fields: (t) => ({
    seq: t.exposeInt('seq', { description: "The event's place in the instance's history: 1, 2, …" }),
    row: t.exposeInt('row', {
      description:
        'The seq of the hash-chained history row that carries the event (the seq verifyAudit names); the events of one commit share a row.',
    }),
    eventType: t.exposeString('eventType'),
    actor: t.exposeString('actor'),
    at: t.field({ type: 'DateTime', resolve: (h) => h.at }),
    taskId: t.exposeID('taskId', { nullable: true }),
    attempt: t.exposeInt('attempt', { nullable: true }),
    sequence: t.exposeInt('sequence', { nullable: true }),
    approvalId: t.exposeID('approvalId', { nullable: true }),
    incidentId: t.exposeID('incidentId', { nullable: true }),
    data: t.field({ type: 'JSON', resolve: (h) => h.data }),
    hash: t.exposeString('hash', { description: 'The hash of the history row that carries the event.' }),
  }),
});

const UserTask = builder.objectRef<UserTaskView>('UserTask').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    nodeId: t.exposeString('nodeId'),
    state: t.field({ type: UserTaskState, resolve: (u) => u.state }),
    candidateGroups: t.exposeStringList('candidateGroups'),
    processInstanceId: t.exposeID('processInstanceId'),
    completedAt: t.field({ type: 'DateTime', nullable: true, resolve: (u) => u.completedAt }),
    createdAt: t.field({ type: 'DateTime', resolve: (u) => u.createdAt }),
  }),
});

export const ProcessInstance = builder.objectRef<InstanceView>('ProcessInstance').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    key: t.exposeString('key'),
    version: t.exposeInt('version'),
    state: t.field({ type: InstanceState, resolve: (i) => i.state }),
    currentNodeId: t.exposeString('currentNodeId', { nullable: true }),
    businessKey: t.exposeString('businessKey', { nullable: true }),
    variables: t.field({ type: 'JSON', resolve: (i) => i.variables }),
    parentTaskId: t.exposeID('parentTaskId', { nullable: true }),
    traceId: t.exposeString('traceId', {
      nullable: true,
      description: "The OpenTelemetry trace id of the instance's trace (null when it started untraced).",
    }),
    createdAt: t.field({ type: 'DateTime', resolve: (i) => i.createdAt }),
    endedAt: t.field({ type: 'DateTime', nullable: true, resolve: (i) => i.endedAt }),
    tasks: t.field({ type: [ExternalTask], resolve: (i, _a, ctx) => ctx.loaders.tasksByInstance.load(i.id) }),
    userTasks: t.field({
      type: [UserTask],
      resolve: (i, _a, ctx) => ctx.loaders.userTasksByInstance.load(i.id),
    }),
    history: t.field({
      type: [HistoryEvent],
      resolve: (i, _a, ctx) => ctx.loaders.historyByInstance.load(i.id),
    }),
  }),
});

const ProcessInstanceConnection = connection<InstanceView>('ProcessInstance', ProcessInstance);

const AuditVerification = builder.objectRef<AuditShape>('AuditVerification').implement({
  fields: (t) => ({
    processInstanceId: t.exposeID('processInstanceId'),
    valid: t.exposeBoolean('valid'),
    rows: t.exposeInt('rows'),
    events: t.exposeInt('events', {
      description: "The events those rows carry (a row holds one commit's events).",
    }),
    firstBrokenSeq: t.exposeInt('firstBrokenSeq', { nullable: true }),
    reason: t.exposeString('reason', { nullable: true }),
    headHash: t.exposeString('headHash', { nullable: true }),
  }),
});

builder.queryFields((t) => ({
  processInstance: byId(t, ProcessInstance, (e, actor, id) => loadInstanceFor(e.db, actor, id), {
    nullable: true,
  }),
  processInstances: t.field({
    type: ProcessInstanceConnection,
    args: { state: t.arg({ type: InstanceState }), key: t.arg.string(), ...pageArgs(t.arg) },
    resolve: (_r, a, ctx) => listInstances(ctx.engine, ctx.actor!, a),
  }),
  verifyAudit: t.field({
    type: AuditVerification,
    args: { processInstanceId: t.arg.id({ required: true }) },
    resolve: (_r, a, ctx) => verifyAudit(ctx.engine, ctx.actor!, a.processInstanceId),
  }),
}));

builder.mutationFields((t) => ({
  startProcess: t.field({
    type: ProcessInstance,
    args: {
      key: t.arg.string({ required: true }),
      variables: t.arg({ type: 'JSON' }),
      businessKey: t.arg.string(),
    },
    resolve: (_r, a, ctx) => startProcess(ctx.engine, ctx.actor!, a),
  }),
  cancelProcess: t.field({
    type: ProcessInstance,
    authScopes: { admin: true },
    args: { id: t.arg.id({ required: true }), reason: t.arg.string({ required: true }) },
    resolve: (_r, a, ctx) => cancelProcess(ctx.engine, ctx.actor!, a.id, a.reason),
  }),
  suspendProcess: byId(t, ProcessInstance, suspendProcess, { authScopes: { admin: true } }),
  resumeProcess: byId(t, ProcessInstance, resumeProcess, { authScopes: { admin: true } }),
  completeUserTask: t.field({
    type: UserTask,
    args: { id: t.arg.id({ required: true }), variables: t.arg({ type: 'JSON' }) },
    resolve: (_r, a, ctx) => completeUserTask(ctx.engine, ctx.actor!, a.id, a.variables),
  }),
}));
