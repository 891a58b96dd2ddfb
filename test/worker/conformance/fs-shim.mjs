/** `fs` for the conformance CLI on Node 20 (see node20.mjs). */
import fs from 'node:fs';

export * from 'node:fs';
export default fs;
export const globSync =
  fs.globSync ??
  (() => {
    throw new Error('fs.globSync needs Node 22; only `conformance tier-check` uses it.');
  });
