/**
 * MCP tool annotations tighten a binding, never loosen it. They are hints a server gives about its own
 * tools (untrusted by the specification), so one only ever makes the worker more careful: a tool its
 * server marks `destructiveHint: true` bound as `read` (called without an idempotency key, a journal
 * entry before the call or a person's approval) is refused at the contract check. A `readOnlyHint: true`
 * never relaxes a `write` or `approval_required` binding.
 */
import type { ToolBinding } from './graphql.js';

/** Why this binding contradicts its server's annotations (the attempt must stop), or null. */
export function annotationConflict(
  b: Pick<ToolBinding, 'ref' | 'tool' | 'policy'>,
  annotations: { destructiveHint?: boolean } | undefined,
): string | null {
  if (b.policy === 'READ' && annotations?.destructiveHint === true) {
    return `${b.ref}: the server marks tool "${b.tool}" destructive (destructiveHint: true), but the definition binds it as read, which calls it without a key or an approval. Bind it as write or approval_required and deploy again.`;
  }
  return null;
}
