import {
  getIncident,
  type IncidentView,
  listIncidents,
  resolveIncident,
} from '../../engine/incidents/index.js';
import { builder, connection } from '../builder.js';
import { selectEvents } from '../pubsub.js';

const IncidentState = builder.enumType('IncidentState', { values: ['OPEN', 'RESOLVED'] as const });

export const Incident = builder.objectRef<IncidentView>('Incident').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    type: t.exposeString('type'),
    state: t.field({ type: IncidentState, resolve: (i) => i.state }),
    message: t.exposeString('message'),
    processInstanceId: t.exposeID('processInstanceId', { nullable: true }),
    taskId: t.exposeID('taskId', { nullable: true }),
    attempt: t.exposeInt('attempt', { nullable: true }),
    sequence: t.exposeInt('sequence', { nullable: true }),
    workerId: t.exposeString('workerId', { nullable: true }),
    resolution: t.field({ type: 'JSON', nullable: true, resolve: (i) => i.resolution }),
    resolvedAt: t.field({ type: 'DateTime', nullable: true, resolve: (i) => i.resolvedAt }),
    createdAt: t.field({ type: 'DateTime', resolve: (i) => i.createdAt }),
  }),
});

const IncidentConnection = connection<IncidentView>('Incident', Incident);

const ResolveIncidentInput = builder.inputType('ResolveIncidentInput', {
  fields: (t) => ({
    id: t.id({ required: true }),
    comment: t.string({ required: true }),
    happened: t.boolean({ description: 'TOOL_OUTCOME_UNKNOWN: did the call take effect?' }),
    result: t.field({
      type: 'JSON',
      description: 'TOOL_OUTCOME_UNKNOWN: what the call returned, fed to the agent.',
    }),
  }),
});

builder.queryField('incidents', (t) =>
  t.field({
    type: IncidentConnection,
    authScopes: { authenticated: true },
    args: { state: t.arg({ type: IncidentState }), first: t.arg.int(), after: t.arg.string() },
    resolve: (_r, a, ctx) => listIncidents(ctx.engine, ctx.actor!, a),
  }),
);

builder.mutationField('resolveIncident', (t) =>
  t.field({
    type: Incident,
    authScopes: { authenticated: true },
    args: { input: t.arg({ type: ResolveIncidentInput, required: true }) },
    resolve: (_r, { input }, ctx) =>
      resolveIncident(ctx.engine, ctx.actor!, { ...input, id: String(input.id) }),
  }),
);

builder.subscriptionField('incidentOpened', (t) =>
  t.field({
    type: Incident,
    authScopes: { authenticated: true },
    subscribe: (_r, _a, ctx) =>
      selectEvents(ctx.hub.pubsub.subscribe('incident'), (e) =>
        ctx.actor!.kind !== 'WORKER' &&
        (ctx.actor!.projectId === null || e.projectId === ctx.actor!.projectId)
          ? ctx.hub.share(`incident:${e.incidentId}`, () =>
              getIncident(ctx.engine.db, { ...ctx.actor!, projectId: null }, e.incidentId),
            )
          : null,
      ),
    resolve: (i) => i,
  }),
);
