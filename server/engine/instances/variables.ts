/** An instance's variables: checked against the declared ones at the start, and interpolated into templates. */
import type { VariableSpec } from '../definitions/index.js';

const TEMPLATE_RE = /\$\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}/g;

/** `${var}` interpolation: a template that is exactly one reference keeps the variable's type. */
export function interpolate(template: string, vars: Record<string, unknown>): unknown {
  const whole = /^\$\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}$/.exec(template);
  if (whole) return vars[whole[1]] ?? null;
  return template.replace(TEMPLATE_RE, (_, name: string) => {
    const v = vars[name];
    if (v === undefined || v === null) return '';
    return typeof v === 'string' ? v : JSON.stringify(v);
  });
}

const TYPE_OK: Record<VariableSpec['type'], (v: unknown) => boolean> = {
  string: (v) => typeof v === 'string',
  number: (v) => typeof v === 'number' && Number.isFinite(v),
  integer: (v) => Number.isInteger(v),
  boolean: (v) => typeof v === 'boolean',
  array: (v) => Array.isArray(v),
  object: (v) => typeof v === 'object' && v !== null && !Array.isArray(v),
};

/** Checks variables against the declared ones; returns the list of problems (empty = fine). */
export function checkVariables(declared: Record<string, VariableSpec>, vars: unknown) {
  const errors: { path: string; message: string }[] = [];
  if (typeof vars !== 'object' || vars === null || Array.isArray(vars)) {
    return [{ path: 'variables', message: 'variables must be a JSON object' }];
  }
  const v = vars as Record<string, unknown>;
  for (const [name, spec] of Object.entries(declared)) {
    if (v[name] === undefined || v[name] === null) {
      if (spec.required)
        errors.push({ path: `variables.${name}`, message: `required ${spec.type} "${name}" is missing` });
    } else if (!TYPE_OK[spec.type](v[name])) {
      errors.push({ path: `variables.${name}`, message: `"${name}" must be of type ${spec.type}` });
    }
  }
  for (const name of Object.keys(v)) {
    if (!(name in declared))
      errors.push({ path: `variables.${name}`, message: `"${name}" is not a declared variable` });
  }
  return errors;
}
