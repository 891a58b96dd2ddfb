/**
 * Content in spans (prompts, arguments, answers): never, unless ABADA_OTEL_CAPTURE_CONTENT=true. Then it
 * is redacted before it is set: the binding's `redact` paths (the same paths an approver never sees) and,
 * at any depth, the keys the JSON logs redact (secrets, tokens, passwords, authorization, API keys).
 */
import { REDACTED, redactArguments } from '../shared/redact.js';
import { tracing } from './state.js';

const SECRET_KEY =
  /^(authorization|cookie|secret|token|password|api[_-]?key|access[_-]?token|client[_-]?secret)$/i;

function dropSecrets(value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== 'object' || depth > 50) return value;
  if (Array.isArray(value)) return value.map((v) => dropSecrets(v, depth + 1));
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [k, SECRET_KEY.test(k) ? REDACTED : dropSecrets(v, depth + 1)]),
  );
}

/** The value as a span attribute (JSON), redacted; undefined unless content capture is on. */
export function captured(value: unknown, redactPaths: readonly string[] = []): string | undefined {
  if (!tracing.on || !tracing.captureContent || value === undefined) return undefined;
  let v: unknown = value;
  if (redactPaths.length && v && typeof v === 'object' && !Array.isArray(v))
    v = redactArguments(v as Record<string, unknown>, redactPaths).view;
  const text = typeof v === 'string' ? v : JSON.stringify(dropSecrets(v));
  return text.length > 32_000 ? `${text.slice(0, 32_000)}… [truncated]` : text;
}
