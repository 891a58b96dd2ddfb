/** Definitions (SPEC §2): deploying APL, the frozen bindings, and reading them back. */
export { matchesRule } from '../../shared/expression.js';
export { renderTemplate } from '../../shared/template.js';
export type {
  AgentNode,
  AgentWork,
  ApprovalRule,
  FrozenProcess,
  ProcessNode,
  ToolBinding,
  VariableSpec,
} from '../../shared/types.js';
export { bindingPolicy } from './apl/policy.js';
export { REDACTED, parseRedactPath, redactArguments } from '../../shared/redact.js';
export {
  type DefinitionView,
  type ToolServerView,
  deploy,
  latestDefinition,
  listDefinitions,
  listToolServers,
  readCredential,
  readDefinitionSpec,
  setCredential,
} from './deploy.js';
export { AGENT_PROFILE_VERSION } from './apl/node.js';
