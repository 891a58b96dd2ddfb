export * from './basis.js';
export * from './decide.js';
export * from './list.js';
export * from './propose.js';
export * from './retire.js';
export * from './sla.js';
export * from './views.js';
export * from './visibility.js';
export * from './revoke.js';
export * from './standing.js';
export * from './expiry.js';
export {
  type ArgumentFailure,
  argumentFailures,
  failureRecord,
  type RuleOutcome,
  type RuleRef,
  ruleAt,
  ruleFor,
  ruleRecord,
} from './rules.js';
export type { ApprovalVersion } from './versions.js';
export { reapproveByRule, reopenLapsed } from './lapse.js';
