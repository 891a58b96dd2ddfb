import * as nodeCrypto from 'node:crypto';

/**
 * Canonical JSON (keys sorted by UTF-16 code units, no whitespace, `undefined` dropped), so that digests
 * of two requests meaning the same thing match whatever order the model wrote the keys in.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    if (value === undefined || (typeof value === 'number' && !Number.isFinite(value))) return 'null';
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v)).join(',')}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(',')}}`;
}

/** SHA-256 hex; `crypto.hash` (one shot, no Hash object) where this Node has it. */
export const sha256Hex: (text: string | Buffer) => string =
  typeof nodeCrypto.hash === 'function'
    ? (text) => nodeCrypto.hash('sha256', text, 'hex')
    : (text) => nodeCrypto.createHash('sha256').update(text).digest('hex');

/** The digest of a tool call: SHA-256 over canonical `{ toolRef, arguments }` (the call id is not part of it). */
export function toolCallDigest(toolRef: string, args: unknown): string {
  return sha256Hex(canonicalJson({ arguments: args ?? {}, toolRef }));
}

/** The digest of any other step request (model calls): SHA-256 over its canonical JSON. */
export function requestDigest(request: unknown): string {
  return sha256Hex(canonicalJson(request));
}
