/** APL front end: YAML source → validated, frozen deployment (pure; no database). */
export { APL as APL_ERROR_CODES, MAX_ERRORS } from './errors.js';
export {
  evaluate,
  type Expr,
  MAX_EXPRESSION_DEPTH,
  MAX_EXPRESSION_LENGTH,
  matchesRule,
  parseExpression,
} from '../../../shared/expression.js';
export {
  type BindingPolicy,
  bindingPolicy,
  DEFAULT_APPROVAL_VALID_MINUTES,
  DEFAULT_RISK,
  type FrozenSettings,
  nodeRedactInputs,
  withDefaults,
} from './policy.js';
export {
  checkTemplate,
  renderArguments,
  renderTemplate,
  type TemplateRef,
} from '../../../shared/template.js';
export { parseRedactPath, REDACTED, redactArguments } from './redact.js';
export * from './types.js';
export { validateSource } from './validate.js';
