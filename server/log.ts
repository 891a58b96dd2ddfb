/**
 * Structured JSON logs (pino), one line per event. Fields name the work — taskId, attempt, step
 * (sequence), processInstanceId, approvalId — never its content: prompts, arguments, secrets and tokens
 * are redacted wherever they appear in a logged object, so a careless `log.info({ input })` leaks nothing.
 */
import pino, { type Logger } from 'pino';
import { traceLogFields } from './telemetry/index.js';

const SENSITIVE = [
  'authorization',
  'secret',
  'token',
  'prompt',
  'arguments',
  'password',
  'apiKey',
  'request',
  'response',
];

export const REDACT_PATHS = [
  'req.headers.authorization',
  'headers.authorization',
  'headers.cookie',
  'connectionParams.authorization',
  ...SENSITIVE,
  ...SENSITIVE.map((k) => `*.${k}`),
  ...SENSITIVE.map((k) => `*.*.${k}`),
];

export function createLogger(opts: { level?: string; destination?: pino.DestinationStream } = {}): Logger {
  return pino(
    {
      level: opts.level ?? process.env.LOG_LEVEL ?? 'info',
      base: { service: 'abada', pid: process.pid },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      // trace_id / span_id on lines written inside a span (nothing while tracing is off)
      mixin: traceLogFields,
    },
    opts.destination,
  );
}

/** The process logger; LOG_LEVEL sets its level (config.ts reads the same variable). */
export const log: Logger = createLogger();

export type { Logger };
