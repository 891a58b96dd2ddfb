/** JSON Schema fields (output_schema, input_schema): draft-07, or 2020-12 when `$schema` says so. */
import { Ajv } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { APL, joinKey } from './errors.js';
import { has, type Obj, type Reader } from './fields.js';

const MAX_SCHEMA_CHARS = 200_000;

/** A JSON Schema field (`output_schema`, `input_schema`): the schema; null when absent or invalid (reported). */
export function readSchema(r: Reader, o: Obj, key: string, p: string): Record<string, unknown> | null {
  if (!has(o, key) || o[key] === null) return null;
  const problem = checkJsonSchema(o[key]);
  if (!problem) return o[key] as Record<string, unknown>;
  const why = `${key} is not a valid JSON Schema: ${problem.replace('output_schema', key)}. Fix the schema.`;
  return r.err(APL.SCHEMA_INVALID, joinKey(p, key), why);
}

/** Returns null when the schema compiles, else a message saying what is wrong. */
function checkJsonSchema(schema: unknown): string | null {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) {
    return 'output_schema must be a JSON Schema object, e.g. { type: object, required: [answer] }';
  }
  let text: string;
  try {
    text = JSON.stringify(schema);
  } catch (e) {
    // JSON.stringify refuses a cycle (YAML aliases can make one) or a BigInt with a TypeError
    if (!(e instanceof TypeError)) throw e;
    return 'output_schema cannot be turned into JSON';
  }
  if (text.length > MAX_SCHEMA_CHARS) return `output_schema is larger than ${MAX_SCHEMA_CHARS} characters`;
  const cached = results.get(text);
  if (cached !== undefined) return cached;
  const result = compile(schema);
  if (results.size >= 500) results.clear();
  results.set(text, result);
  return result;
}

/** Compilation results by canonical text: compiling is the slowest step of validation. */
const results = new Map<string, string | null>();

function compile(schema: object): string | null {
  const declared = (schema as Record<string, unknown>).$schema;
  const is2020 = typeof declared === 'string' && declared.includes('2020-12');
  try {
    const ajv = is2020
      ? new Ajv2020({ strict: false, allErrors: false })
      : new Ajv({ strict: false, allErrors: false });
    ajv.compile(schema as Record<string, unknown>);
    return null;
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    return msg.split('\n')[0].slice(0, 300);
  }
}
