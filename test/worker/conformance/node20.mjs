/**
 * @modelcontextprotocol/conformance 0.1.16 imports `globSync` from `fs`, which Node adds in 22; on
 * Node 20 the whole CLI fails to load. Only its `tier-check` command calls it, so this loader hands that
 * package an `fs` with a stub `globSync` (run as `node --import ./node20.mjs …/conformance/dist/index.js`).
 * Nothing else is changed; on Node 22+ the real `fs.globSync` is used.
 */
import { register } from 'node:module';

register('./node20-hooks.mjs', import.meta.url);
