/** What tests use of definitions/'s insides (not part of its face, index.ts). */
export { evaluate, parseExpression } from '../../shared/expression.js';
export { renderArguments } from '../../shared/template.js';
export type { ApprovalSettings, ToolServerSpec } from '../../shared/types.js';
export { APL as APL_ERROR_CODES, type AplError } from './apl/errors.js';
export { nodeRedactInputs } from './apl/policy.js';
export type { ValidatedDeployment, ValidationContext, ValidationResult } from './apl/validate.js';
export { validateSource } from './apl/validate.js';
