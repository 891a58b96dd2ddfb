import { createPrincipal, type PrincipalView } from '../../engine/principals/index.js';
import { builder } from '../builder.js';

export const PrincipalKind = builder.enumType('PrincipalKind', {
  values: ['WORKER', 'HUMAN', 'ADMIN'] as const,
});

export const Principal = builder.objectRef<PrincipalView>('Principal').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    kind: t.field({ type: PrincipalKind, resolve: (p) => p.kind }),
    name: t.exposeString('name'),
    projectId: t.exposeID('projectId', { nullable: true }),
    groups: t.exposeStringList('groups'),
    topics: t.exposeStringList('topics'),
  }),
});

const CreatedPrincipal = builder
  .objectRef<{ principal: PrincipalView; token: string }>('CreatedPrincipal')
  .implement({
    fields: (t) => ({
      principal: t.field({ type: Principal, resolve: (r) => r.principal }),
      token: t.exposeString('token', { description: 'Shown once; only its hash is stored.' }),
    }),
  });

const CreatePrincipalInput = builder.inputType('CreatePrincipalInput', {
  fields: (t) => ({
    kind: t.field({ type: PrincipalKind, required: true }),
    name: t.string({ required: true }),
    groups: t.stringList(),
    topics: t.stringList(),
    projectId: t.id({
      description: 'Defaults to your project; "*" makes a global worker (bootstrap admin only).',
    }),
  }),
});

builder.queryField('me', (t) =>
  t.field({
    type: Principal,
    authScopes: { authenticated: true },
    resolve: (_r, _a, ctx) => {
      const a = ctx.actor!;
      return {
        id: a.principalId,
        kind: a.kind,
        name: a.name,
        projectId: a.projectId,
        groups: a.groups,
        topics: a.topics,
      };
    },
  }),
);

builder.mutationField('createPrincipal', (t) =>
  t.field({
    type: CreatedPrincipal,
    authScopes: { admin: true },
    args: { input: t.arg({ type: CreatePrincipalInput, required: true }) },
    resolve: (_r, { input }, ctx) =>
      createPrincipal(ctx.engine, ctx.actor!, {
        kind: input.kind,
        name: input.name,
        groups: input.groups ?? null,
        topics: input.topics ?? null,
        projectId: input.projectId == null ? null : String(input.projectId),
      }),
  }),
);
