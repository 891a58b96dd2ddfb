/** Module hooks for node20.mjs: `fs` imported by the conformance package resolves to fs-shim.mjs. */
const SHIM = new URL('./fs-shim.mjs', import.meta.url).href;

export async function resolve(specifier, context, next) {
  const fromConformance = context.parentURL?.includes('/node_modules/@modelcontextprotocol/conformance/');
  if (fromConformance && (specifier === 'fs' || specifier === 'node:fs'))
    return { url: SHIM, shortCircuit: true };
  return next(specifier, context);
}
