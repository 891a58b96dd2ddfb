/**
 * `graphql()` for Node callers: documents typed from ../../schema.graphql through the generated
 * introspection in ./graphql-env.d.ts (`npm run client:types` regenerates it; a test fails when it drifts).
 * The web dashboard has its own (web/lib/graphql.ts); both read the same schema.
 */
import { initGraphQLTada } from 'gql.tada';
import type { introspection } from './graphql-env.js';

export const graphql = initGraphQLTada<{
  introspection: introspection;
  scalars: { DateTime: string; JSON: unknown };
  // Fragments here only share selections between documents; callers read results whole.
  disableMasking: true;
}>();

export type { ResultOf, TadaDocumentNode, VariablesOf } from 'gql.tada';
