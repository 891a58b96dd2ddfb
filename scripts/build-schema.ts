/** Writes schema.graphql from the Pothos schema (committed; a test fails when it drifts). */
import { writeFileSync } from 'node:fs';
import { printSchema } from 'graphql';
import { schema } from '../server/graphql/schema/index.js';

export function printAbadaSchema(): string {
  return `${printSchema(schema)}\n`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  writeFileSync(new URL('../schema.graphql', import.meta.url), printAbadaSchema());
  console.log('schema.graphql written');
}
