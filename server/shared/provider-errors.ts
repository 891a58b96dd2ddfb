/**
 * How openid-client's failures read, for the engine's sign-in and the worker's client credentials: the
 * provider refused, or could not be reached. Anything else (a TypeError of our own) is a bug, rethrown.
 */
import * as client from 'openid-client';

/** An answer of the provider that openid-client accepted but that lacks what a sign-in needs. */
export class ProviderAnswerError extends Error {
  override name = 'ProviderAnswerError';
}

/**
 * Whether openid-client refused what the provider sent (state, nonce, the ID token's signature or claims)
 * or the provider answered an error (a ClientError, or oauth4webapi's answer errors).
 */
export function isProviderRefusal(e: unknown): boolean {
  if (e instanceof ProviderAnswerError) return true;
  if (e instanceof client.ClientError) return e.code !== undefined && !UNREACHED_CODES.has(e.code);
  return (
    e instanceof client.ResponseBodyError ||
    e instanceof client.AuthorizationResponseError ||
    e instanceof client.WWWAuthenticateChallengeError
  );
}

const UNREACHED_CODES = new Set(['OAUTH_TIMEOUT', 'OAUTH_ABORT']);

/** Whether the provider could not be reached: fetch's network failure, or openid-client's timeout. */
export function isProviderUnreachable(e: unknown): boolean {
  if (e instanceof client.ClientError) return e.code !== undefined && UNREACHED_CODES.has(e.code);
  // undici's one message for a request that got no answer (the socket's error is its cause)
  return e instanceof TypeError && e.message === 'fetch failed';
}
