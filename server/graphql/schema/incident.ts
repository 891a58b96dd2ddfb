import {
  getIncident,
  type IncidentView,
  listIncidents,
  resolveIncident,
} from '../../engine/incidents/index.js';
import { builder, byId, connection, pageArgs } from '../builder.js';
import { selectEvents } from '../pubsub.js';
import { eventCursorOf, type Positioned, streamFrom } from '../stream.js';

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
    count: t.exposeInt('count', {
      description:
        'How many times the condition was seen while the incident was open (1 when it happened once).',
    }),
    lastSeenAt: t.field({ type: 'DateTime', resolve: (i) => i.lastSeenAt }),
    createdAt: t.field({ type: 'DateTime', resolve: (i) => i.createdAt }),
    eventCursor: t.string({
      description:
        'The position of the latest event about this incident (on a subscription: of the event delivered); resume a subscription with after: it.',
      resolve: (i, _x, ctx) => eventCursorOf(i, ctx),
    }),
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

builder.queryFields((t) => ({
  incidents: t.field({
    type: IncidentConnection,
    args: { state: t.arg({ type: IncidentState }), ...pageArgs(t.arg) },
    resolve: (_r, a, ctx) => listIncidents(ctx.engine, ctx.actor!, a),
  }),
  incident: byId(t, Incident, (e, actor, id) => getIncident(e.db, actor, id), {
    description: 'One incident (NOT_FOUND when there is none you may see).',
  }),
}));

builder.mutationFields((t) => ({
  resolveIncident: t.field({
    type: Incident,
    args: { input: t.arg({ type: ResolveIncidentInput, required: true }) },
    resolve: (_r, { input }, ctx) => resolveIncident(ctx.engine, ctx.actor!, input),
  }),
}));

builder.subscriptionFields((t) => ({
  incidentOpened: t.field({
    type: Incident,
    args: {
      after: t.arg.string({
        description:
          'Replay first, in order and once, the incidents opened after this eventCursor (kept ABADA_EVENT_RETENTION_HOURS), then go live.',
      }),
    },
    subscribe: async (_r, args, ctx) => {
      const actor = ctx.actor!;
      const events = await streamFrom(ctx, { type: 'incident', opened: null }, args.after);
      return selectEvents(events, (e) =>
        actor.kind !== 'WORKER' && e.type === 'incident'
          ? ctx.hub.share(
              e,
              async (): Promise<Positioned<IncidentView>> => ({
                ...(await getIncident(ctx.engine.db, { ...actor, projectId: null }, e.incidentId)),
                eventPosition: e.position,
              }),
            )
          : null,
      );
    },
    resolve: (i) => i,
  }),
}));
