/** Refusals a person can meet in the dashboard, said as sentences. */
import type { CombinedError } from 'urql';

const SENTENCES: Record<string, string> = {
  UNAUTHENTICATED: 'You are not signed in, or your token is no longer valid. Sign in again.',
  FORBIDDEN: 'You are not allowed to do this. Approvals can only be decided by a person in one of the listed groups.',
  STALE_DIGEST:
    'The call changed after you opened it: what you saw is not what would run. Reload the page and review the arguments again.',
  ALREADY_DECIDED: 'Someone decided this approval before you. Your decision was recorded but has no effect.',
  WORK_RETIRED:
    'This work was cancelled or suspended while it waited, so the call will never run. Nothing to decide.',
  SEPARATION_OF_DUTIES: 'You started this process, so you cannot approve its calls. Ask a colleague in the group.',
  COMMENT_REQUIRED: 'A rejection needs a comment: the agent reads it as the reason.',
  NOT_FOUND: 'This item does not exist, or you cannot see it.',
  VALIDATION_FAILED: 'The definition is not valid; see the errors below.',
  INTERNAL: 'Something went wrong on the server. It was logged; try again in a moment.',
};

export function codeOfError(error: CombinedError | undefined | null): string | undefined {
  const code = error?.graphQLErrors[0]?.extensions?.code;
  return typeof code === 'string' ? code : undefined;
}

/** A sentence for an urql error: the known refusal codes in plain words, else the server's message. */
export function sentence(error: CombinedError | undefined | null): string | null {
  if (!error) return null;
  if (error.networkError) return 'The server cannot be reached. Check your connection; the page retries on reload.';
  const code = codeOfError(error);
  if (code && SENTENCES[code]) return SENTENCES[code];
  return error.graphQLErrors[0]?.message ?? error.message;
}
