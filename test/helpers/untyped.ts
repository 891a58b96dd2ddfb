/**
 * The answer to a selection a test writes inline, untyped. Several hundred such selections probe the
 * engine field by field; typing each with gql.tada's `graphql()` would parse every one at type level in
 * every type-check, and the schema already checks them when they run. Where a test reads a shape
 * repeatedly it types it: the shared documents of fixtures.ts are `graphql()` documents, and helpers
 * return named types.
 */
// biome-ignore lint/suspicious/noExplicitAny: an inline selection's answer is read as the test selected it
export type Untyped = any;
