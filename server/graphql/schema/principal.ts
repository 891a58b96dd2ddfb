import {
  actorView,
  createPrincipal,
  disablePrincipal,
  listPrincipals,
  type PrincipalView,
  rotatePrincipalToken,
  updatePrincipal,
} from '../../engine/principals/index.js';
import { builder, byId, connection, pageArgs } from '../builder.js';

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
    oidcClientId: t.exposeString('oidcClientId', {
      nullable: true,
      description:
        'A worker’s OpenID Provider client: its client-credentials access tokens act as this worker.',
    }),
    disabled: t.boolean({
      description: "A disabled principal's tokens and sessions no longer work; disabling is final.",
      resolve: (p) => p.disabledAt !== null,
    }),
    disabledAt: t.field({ type: 'DateTime', nullable: true, resolve: (p) => p.disabledAt }),
    createdAt: t.expose('createdAt', {
      type: 'DateTime',
      nullable: true,
      description: 'Null for the bootstrap admin (ABADA_ADMIN_TOKEN), which is not stored.',
    }),
  }),
});

const PrincipalConnection = connection<PrincipalView>('Principal', Principal);

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
    oidcClientId: t.string({
      description: 'Workers only: the OpenID Provider client that signs in as this worker (unique).',
    }),
  }),
});

const UpdatePrincipalInput = builder.inputType('UpdatePrincipalInput', {
  fields: (t) => ({
    id: t.id({ required: true }),
    groups: t.stringList({ description: 'Replaces the groups (humans, admins); omitted = unchanged.' }),
    topics: t.stringList({ description: 'Replaces the topics (workers); omitted = unchanged.' }),
    oidcClientId: t.string({
      description: 'Sets the worker’s OpenID Provider client; "" removes it; omitted = unchanged.',
    }),
  }),
});

builder.queryFields((t) => ({
  me: t.field({
    type: Principal,
    resolve: (_r, _a, ctx) => actorView(ctx.actor!),
  }),
  principals: t.field({
    type: PrincipalConnection,
    authScopes: { admin: true },
    description: 'The principals you manage (your project; the bootstrap admin: all), newest first.',
    args: { kind: t.arg({ type: PrincipalKind }), ...pageArgs(t.arg) },
    resolve: (_r, a, ctx) => listPrincipals(ctx.engine, ctx.actor!, a),
  }),
}));

builder.mutationFields((t) => ({
  createPrincipal: t.field({
    type: CreatedPrincipal,
    authScopes: { admin: true },
    args: { input: t.arg({ type: CreatePrincipalInput, required: true }) },
    resolve: (_r, { input }, ctx) => createPrincipal(ctx.engine, ctx.actor!, input),
  }),
  updatePrincipal: t.field({
    type: Principal,
    authScopes: { admin: true },
    args: { input: t.arg({ type: UpdatePrincipalInput, required: true }) },
    resolve: (_r, { input }, ctx) => updatePrincipal(ctx.engine, ctx.actor!, input),
  }),
  disablePrincipal: byId(t, Principal, disablePrincipal, {
    authScopes: { admin: true },
    description: 'Its tokens and graphql-ws connections stop at once, on every engine. Final.',
  }),
  rotatePrincipalToken: byId(t, CreatedPrincipal, rotatePrincipalToken, {
    authScopes: { admin: true },
    description: 'A new token, shown once; the old one stops at once.',
  }),
}));
