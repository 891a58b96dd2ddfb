/** Redaction paths live in server/shared (the worker redacts captured span content with them too). */
export * from '../../../shared/redact.js';
