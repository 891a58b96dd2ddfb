/** Approvals (SPEC §5, §11, §14): proposing, deciding, revoking, the rules over a call, and what approvers see. */
export { type ApprovalBasis, type BasisCall, approvalBasis } from './basis.js';
export { decideApproval } from './decide.js';
export { listApprovals } from './list.js';
export { approvalOpened, autoHistory, isAutoApproval, levelsOf, openApproval } from './propose.js';
export { revokeApproval } from './revoke.js';
export { type RuleRef, argumentFailures, failureRecord, ruleAt, ruleFor, ruleRecord } from './rules.js';
export { startSweeps } from './sla.js';
export {
  type Lapse,
  type Standing,
  approvalStanding,
  lapseHistory,
  lapseOf,
  reapproveByRule,
  reopenApproval,
  voidApproval,
} from './standing.js';
export {
  type ApprovalVersion,
  type ApprovalView,
  type DecisionView,
  type EarlierProposal,
  decisionsOf,
  earlierProposals,
  levelNumber,
  loadApprovalFor,
  maySeeApproval,
  toApprovalView,
  versionsOf,
} from './views.js';
export { retireApprovalsOfTasks } from './withdraw.js';
