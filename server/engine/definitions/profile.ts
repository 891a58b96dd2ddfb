/**
 * The agent profile: what an agent node's external task carries for its worker (model, prompt, inputs,
 * frozen tool bindings, limits, output contract). Frozen when the task is created, versioned.
 */
import type { AgentNode } from './apl/types.js';

export const AGENT_PROFILE_VERSION = 'abada.agent/v1';

export interface AgentWork {
  profileVersion: string;
  model: string;
  fallbackModels: string[];
  prompt: string;
  inputs: Record<string, unknown>;
  resultVariable: string;
  outputSchema: Record<string, unknown> | null;
  confidenceThreshold: number | null;
  limits: { maxTurns: number | null; maxTokensTotal: number | null; budgetUsd: number | null };
  toolBindings: AgentNode['bindings'];
  onInvalidOutput: string | null;
  onLowConfidence: string | null;
}
