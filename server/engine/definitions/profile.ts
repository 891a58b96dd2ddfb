/**
 * The agent profile: what an agent node's external task carries for its worker (model, prompt, inputs,
 * frozen tool bindings, limits, output contract). Frozen when the task is created, versioned. The shape
 * itself is stored JSON and lives in server/shared/types.ts.
 */
export type { AgentWork } from '../../shared/types.js';

export const AGENT_PROFILE_VERSION = 'abada.agent/v1';
