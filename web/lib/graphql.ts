/**
 * Typed GraphQL documents. The types come from ../schema.graphql through the generated introspection in
 * ../graphql-env.d.ts (`npm run web:types` regenerates it); nothing here is written by hand.
 */
import { initGraphQLTada } from 'gql.tada';
import type { introspection } from '../graphql-env';

export const graphql = initGraphQLTada<{
  introspection: introspection;
  scalars: { DateTime: string; JSON: unknown };
}>();

export type { FragmentOf, ResultOf, VariablesOf } from 'gql.tada';
export { readFragment } from 'gql.tada';
