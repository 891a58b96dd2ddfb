/**
 * The Pothos builder: typed context, auth scopes and scalars. Resolvers stay thin: a scope, the input
 * shape, one engine call.
 */
import SchemaBuilder, { type OutputRef } from '@pothos/core';
import ScopeAuthPlugin from '@pothos/plugin-scope-auth';
import { GraphQLError, GraphQLScalarType, Kind, type ValueNode } from 'graphql';
import type { Actor, EngineContext } from '../engine/common/index.js';
import { log } from '../log.js';
import type { Loaders } from './loaders.js';
import type { EventHub } from './pubsub.js';

export interface GraphQLContext {
  actor: Actor | null;
  /** why a token was refused, when the caller can act on it (a disabled principal) */
  authRefusal?: string | null;
  engine: EngineContext;
  hub: EventHub;
  loaders: Loaders;
  signal?: AbortSignal;
}

export const builder = new SchemaBuilder<{
  Context: GraphQLContext;
  AuthScopes: { authenticated: boolean; admin: boolean; worker: boolean; human: boolean };
  // graphql-js hands every ID argument over as a string
  Scalars: {
    ID: { Input: string; Output: string | number };
    JSON: { Input: unknown; Output: unknown };
    DateTime: { Input: Date; Output: Date | string };
  };
  DefaultFieldNullability: false;
}>({
  plugins: [ScopeAuthPlugin],
  defaultFieldNullability: false,
  scopeAuth: {
    authScopes: (ctx) => ({
      authenticated: ctx.actor !== null,
      admin: ctx.actor?.kind === 'ADMIN',
      worker: ctx.actor?.kind === 'WORKER',
      human: ctx.actor?.kind === 'HUMAN',
    }),
    unauthorizedError: (_parent, ctx, info) => {
      if (ctx.actor !== null)
        return new GraphQLError('Your principal may not use this field.', {
          extensions: { code: 'FORBIDDEN' },
        });
      // an attempt to decide with no credential has no actor to chain (SPEC §14.5): count and log it
      if (info.fieldName === 'decideApproval' || info.fieldName === 'revokeApproval') {
        ctx.engine.counters.unauthenticatedDecisions++;
        log.warn(
          { event: 'decision.unauthenticated', field: info.fieldName },
          'unauthenticated decision attempt',
        );
      }
      return new GraphQLError(ctx.authRefusal ?? 'Sign in: send Authorization: Bearer <token>.', {
        extensions: { code: 'UNAUTHENTICATED' },
      });
    },
  },
});

function parseLiteralJson(ast: ValueNode): unknown {
  switch (ast.kind) {
    case Kind.STRING:
    case Kind.BOOLEAN:
      return ast.value;
    case Kind.INT:
    case Kind.FLOAT:
      return Number(ast.value);
    case Kind.OBJECT:
      return Object.fromEntries(ast.fields.map((f) => [f.name.value, parseLiteralJson(f.value)]));
    case Kind.LIST:
      return ast.values.map(parseLiteralJson);
    case Kind.NULL:
      return null;
    default:
      throw new GraphQLError('JSON literals cannot hold variables; pass the whole value as a variable.');
  }
}

builder.addScalarType(
  'JSON',
  new GraphQLScalarType({
    name: 'JSON',
    description: 'Any JSON value.',
    serialize: (v) => v,
    parseValue: (v) => v,
    parseLiteral: parseLiteralJson,
  }),
);

builder.addScalarType(
  'DateTime',
  new GraphQLScalarType<Date, string>({
    name: 'DateTime',
    description: 'An ISO-8601 timestamp in UTC.',
    serialize: (v) => (v instanceof Date ? v.toISOString() : new Date(String(v)).toISOString()),
    parseValue: (v) => {
      const d = new Date(String(v));
      if (Number.isNaN(d.getTime())) throw new GraphQLError('DateTime must be ISO-8601.');
      return d;
    },
    parseLiteral: (ast) => {
      if (ast.kind !== Kind.STRING) throw new GraphQLError('DateTime must be a string.');
      return new Date(ast.value);
    },
  }),
);

// every root field needs a caller; a field's own scopes narrow that further
builder.queryType({ authScopes: { authenticated: true } });
builder.mutationType({ authScopes: { authenticated: true } });
builder.subscriptionType({ authScopes: { authenticated: true } });

export interface Page<T> {
  edges: { node: T; cursor: string }[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
  totalCount: number;
}

const PageInfo = builder.objectRef<Page<unknown>['pageInfo']>('PageInfo').implement({
  fields: (t) => ({
    hasNextPage: t.exposeBoolean('hasNextPage'),
    endCursor: t.exposeString('endCursor', { nullable: true }),
  }),
});

type ArgBuilder = Parameters<Parameters<typeof builder.queryFields>[0]>[0]['arg'];

/** The `first`/`after` arguments of a paged query (after its filters). */
export const pageArgs = (arg: ArgBuilder) => ({ first: arg.int(), after: arg.string() });

/** A query or command `(id: ID!)`: one engine call on the caller and the id. */
export function byId<T>(
  // biome-ignore lint/suspicious/noExplicitAny: a Query or Mutation field builder
  t: { field: (options: any) => any; arg: ArgBuilder },
  type: OutputRef<T> | 'Boolean',
  call: (engine: EngineContext, actor: Actor, id: string) => Promise<T | null>,
  options: { authScopes?: { admin: true }; description?: string; nullable?: true } = {},
) {
  return t.field({
    ...options,
    type,
    args: { id: t.arg.id({ required: true }) },
    resolve: (_r: unknown, a: { id: string }, ctx: GraphQLContext) => call(ctx.engine, ctx.actor!, a.id),
  });
}

/** `<Name>Edge` and `<Name>Connection` for a node type: { edges { node cursor } pageInfo totalCount }. */
// biome-ignore lint/suspicious/noExplicitAny: any Pothos object ref of T
export function connection<T>(name: string, nodeRef: any) {
  const Edge = builder.objectRef<Page<T>['edges'][number]>(`${name}Edge`).implement({
    fields: (t) => ({
      node: t.field({ type: nodeRef, resolve: (e) => e.node as never }),
      cursor: t.exposeString('cursor'),
    }),
  });
  return builder.objectRef<Page<T>>(`${name}Connection`).implement({
    fields: (t) => ({
      edges: t.field({ type: [Edge], resolve: (c) => c.edges }),
      pageInfo: t.field({ type: PageInfo, resolve: (c) => c.pageInfo }),
      totalCount: t.exposeInt('totalCount'),
    }),
  });
}
