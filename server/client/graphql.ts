/**
 * `graphql()` for Node callers: documents typed from ../../schema.graphql through the generated
 * introspection in ./graphql-env.d.ts (`npm run client:types` regenerates it; a test fails when it drifts),
 * and their query text. The web dashboard has its own (web/lib/graphql.ts); both read the same schema.
 */
import { initGraphQLTada, type TadaDocumentNode } from 'gql.tada';
import { print } from 'graphql';
import type { introspection } from './graphql-env.js';

export const graphql = initGraphQLTada<{
  introspection: introspection;
  scalars: { DateTime: string; JSON: unknown };
  // Fragments here only share selections between documents; callers read results whole.
  disableMasking: true;
}>();

export type { ResultOf, TadaDocumentNode, VariablesOf } from 'gql.tada';

// biome-ignore lint/suspicious/noExplicitAny: a document's variables may be any input shape
export type AnyDocument = TadaDocumentNode<any, any>;

const printed = new WeakMap<AnyDocument, string>();

/** The query text of a document, printed once per document. */
export function queryText(doc: AnyDocument | string): string {
  if (typeof doc === 'string') return doc;
  const text = printed.get(doc) ?? print(doc);
  printed.set(doc, text);
  return text;
}
