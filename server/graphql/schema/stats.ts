import { type DailyStats, dailyStats } from '../../engine/stats/index.js';
import { builder } from '../builder.js';

const ApprovalDayRef = builder.objectRef<DailyStats['approvals'][number]>('ApprovalDay').implement({
  description:
    'Approvals of one UTC day: opened that day, decided that day, and the median time to decision.',
  fields: (t) => ({
    day: t.exposeString('day', { description: 'YYYY-MM-DD (UTC)' }),
    opened: t.exposeInt('opened'),
    decided: t.exposeInt('decided'),
    medianDecisionSeconds: t.exposeFloat('medianDecisionSeconds', {
      nullable: true,
      description: 'Median of decidedAt − createdAt over the approvals decided that day.',
    }),
  }),
});

const ModelCostDayRef = builder.objectRef<DailyStats['modelCost'][number]>('ModelCostDay').implement({
  description: 'Model calls of one UTC day for one model: the engine-priced cost and the tokens.',
  fields: (t) => ({
    day: t.exposeString('day'),
    model: t.exposeString('model'),
    costUsd: t.exposeFloat('costUsd'),
    inputTokens: t.exposeInt('inputTokens'),
    outputTokens: t.exposeInt('outputTokens'),
  }),
});

const IncidentDayRef = builder.objectRef<DailyStats['incidents'][number]>('IncidentDay').implement({
  fields: (t) => ({ day: t.exposeString('day'), opened: t.exposeInt('opened') }),
});

const DailyStatsRef = builder.objectRef<DailyStats>('DailyStats').implement({
  description: "The home page's numbers per UTC day, zero-filled, for the caller's project.",
  fields: (t) => ({
    from: t.exposeString('from'),
    to: t.exposeString('to'),
    approvals: t.field({ type: [ApprovalDayRef], resolve: (s) => s.approvals }),
    modelCost: t.field({ type: [ModelCostDayRef], resolve: (s) => s.modelCost }),
    incidents: t.field({ type: [IncidentDayRef], resolve: (s) => s.incidents }),
  }),
});

builder.queryField('dailyStats', (t) =>
  t.field({
    type: DailyStatsRef,
    description: 'Approvals, model cost and incidents per day over the last `days` days (1–90, default 14).',
    authScopes: { human: true, admin: true },
    args: { days: t.arg.int({ defaultValue: 14 }) },
    resolve: (_r, { days }, ctx) => dailyStats(ctx.engine, ctx.actor!, days ?? 14),
  }),
);
