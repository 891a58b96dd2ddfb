/** The query text of a document, printed once per document. */
import { print } from 'graphql';
import type { TadaDocumentNode } from './graphql.js';

// biome-ignore lint/suspicious/noExplicitAny: any document prints
const printed = new WeakMap<TadaDocumentNode<any, any>, string>();

// biome-ignore lint/suspicious/noExplicitAny: any document prints
export function queryText(doc: TadaDocumentNode<any, any> | string): string {
  if (typeof doc === 'string') return doc;
  let text = printed.get(doc);
  if (text === undefined) {
    text = print(doc);
    printed.set(doc, text);
  }
  return text;
}
