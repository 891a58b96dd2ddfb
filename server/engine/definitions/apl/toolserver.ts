/** The `ToolServer` document: schema checks and normalisation to `ToolServerSpec`. */
import { APL, describe, joinKey } from './errors.js';
import { has, type Obj, type Reader, RESERVED } from './fields.js';
import { placeToolChecks, readChecks, RULE_FIELDS } from './rules.js';
import { placeGuards } from './guards.js';
import { withDefaults } from './policy.js';
import { readSettings, redactPaths, SETTING_FIELDS } from './settings.js';
import type { Idempotency, ToolPolicy, ToolServerSpec, ToolSpec, Transport } from '../../../shared/types.js';

export const SERVER_NAME = /^[a-z0-9][a-z0-9_.-]*$/i;
export const TOOL_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;
export const POLICIES: readonly ToolPolicy[] = ['read', 'write', 'approval_required'];
const SERVER_FIELDS = [
  ...['kind', 'name', 'transport', 'url', 'command', 'args', 'env', 'credential', 'credential_env'],
  'tools',
];
const TOOL_FIELDS = [
  ...['policy', 'idempotency', 'approvers', 'approval_sla_hours', 'input_schema_sha256', 'editable'],
  'redact',
  ...RULE_FIELDS,
  ...SETTING_FIELDS,
];

export function validateToolServer(r: Reader, doc: Obj): ToolServerSpec | null {
  r.keys(doc, '', SERVER_FIELDS, 'a ToolServer');
  const name = r.str(doc, 'name', '', 'a ToolServer', {
    required: true,
    pattern: SERVER_NAME,
    patternHelp: 'use letters, digits, "-", "_" or "." (e.g. crm).',
    help: 'the name tool refs use, e.g. name: crm',
  });
  if (name !== null && name.toLowerCase() === 'delegate') {
    r.err(
      APL.DOC_FIELD,
      'name',
      '"delegate" is reserved for delegate:<process-key> tool refs. Choose another name.',
    );
  }
  const transport = r.oneOf<Transport>(doc, 'transport', '', ['streamable-http', 'stdio']);
  if (transport === undefined)
    r.missing('', 'transport', 'a ToolServer', 'streamable-http (with url) or stdio (with command).');

  const credential = r.str(doc, 'credential', '', 'a ToolServer', {
    pattern: /^[A-Za-z0-9_.:/-]+$/,
    patternHelp: 'give the name of a stored secret (letters, digits, "-", "_", ".").',
  });
  // where and how the worker reaches the server: the fields its transport allows
  const conn = transport === 'stdio' ? readStdio(r, doc, credential) : transport && readHttp(r, doc);
  const tools = readTools(r, doc);
  if (name === null || !transport || !conn) return null;
  const { url, command, args, env, credentialEnv } = conn;
  return { name, transport, url, command, args, env, credential, credentialEnv, tools };
}

function readHttp(r: Reader, doc: Obj) {
  let url = r.str(doc, 'url', '', 'a streamable-http ToolServer', {
    required: true,
    help: 'the MCP endpoint, e.g. http://127.0.0.1:4100/mcp',
  });
  if (url !== null && !/^https?:\/\/[^\s]+$/i.test(url)) {
    r.err(APL.DOC_FIELD, 'url', `url ${JSON.stringify(url)} must be an http:// or https:// address.`);
    url = null;
  } else if (url !== null && !URL.canParse(url)) {
    r.err(APL.DOC_FIELD, 'url', `url ${JSON.stringify(url)} is not a valid address.`);
    url = null;
  }
  const why = 'applies to stdio servers only. Remove it, or use transport: stdio.';
  for (const k of ['command', 'args', 'env', 'credential_env']) {
    if (has(doc, k)) r.err(APL.DOC_UNKNOWN_FIELD, k, `"${k}" ${why}`);
  }
  return { url, command: null, args: [], env: {}, credentialEnv: null };
}

function readStdio(r: Reader, doc: Obj, credential: string | null) {
  const command = r.str(doc, 'command', '', 'a stdio ToolServer', {
    required: true,
    help: 'the program the worker starts, e.g. npx',
  });
  const args = r.strList(doc, 'args', '', 'a stdio ToolServer') ?? [];
  const env = r.strMap(doc, 'env', '', 'a stdio ToolServer');
  const credentialEnv = r.str(doc, 'credential_env', '', 'a stdio ToolServer', {
    pattern: /^[A-Za-z_][A-Za-z0-9_]*$/,
    patternHelp: 'give an environment variable name, e.g. CRM_TOKEN.',
  });
  if (credentialEnv !== null && credential === null) {
    r.err(
      APL.DOC_FIELD,
      'credential_env',
      'credential_env names where the credential goes: add "credential" too.',
    );
  }
  if (has(doc, 'url'))
    r.err(APL.DOC_UNKNOWN_FIELD, 'url', '"url" applies to streamable-http servers only. Remove it.');
  return { url: null, command, args, env, credentialEnv };
}

function readTools(r: Reader, doc: Obj): Record<string, ToolSpec> {
  const tools: Record<string, ToolSpec> = {};
  if (!has(doc, 'tools') || doc.tools === null) {
    r.missing(
      '',
      'tools',
      'a ToolServer',
      'a mapping of tool name → { policy: read | write | approval_required }.',
    );
    return tools;
  }
  const tm = r.obj(doc.tools, 'tools', '"tools"');
  for (const [toolName, spec] of Object.entries(tm ?? {})) {
    const p = joinKey('tools', toolName);
    if (!TOOL_NAME.test(toolName) || RESERVED.has(toolName)) {
      r.err(
        APL.DOC_FIELD,
        p,
        `Tool name ${JSON.stringify(toolName)} is not allowed: use letters, digits, "_", "-", ".".`,
      );
      continue;
    }
    const ts = validateTool(r, spec, p, toolName);
    if (ts) tools[toolName] = ts;
  }
  return tools;
}

function validateTool(r: Reader, value: unknown, p: string, toolName: string): ToolSpec | null {
  const what = `tool "${toolName}"`;
  const o = r.obj(value, p, `Tool "${toolName}"`);
  if (!o) return null;
  r.keys(o, p, TOOL_FIELDS, what);
  const policy = r.oneOf(o, 'policy', p, POLICIES);
  if (policy === undefined) r.missing(p, 'policy', what, 'read, write or approval_required.');
  const keyed = 'key (the tool honours an Idempotency-Key) or none';
  const idempotency = r.oneOf<Idempotency>(o, 'idempotency', p, ['key', 'none'], keyed) ?? 'none';
  const approvers = r.strList(o, 'approvers', p, what) ?? [];
  const approvalSlaHours = r.num(o, 'approval_sla_hours', p, what, { positive: true });
  let inputSchemaSha256: string | null = null;
  if (has(o, 'input_schema_sha256') && o.input_schema_sha256 !== null) {
    const v = o.input_schema_sha256;
    if (typeof v === 'string' && /^[0-9a-f]{64}$/i.test(v)) inputSchemaSha256 = v.toLowerCase();
    else {
      r.err(
        APL.TOOL_SCHEMA_PIN,
        joinKey(p, 'input_schema_sha256'),
        `input_schema_sha256 must be 64 hexadecimal characters (the SHA-256 of the tool's input schema), not ${describe(v)}.`,
      );
    }
  }
  const editable = r.bool(o, 'editable', p, what, false);
  const rl = r.strList(o, 'redact', p, what);
  const redact = rl ? redactPaths(r, rl, joinKey(p, 'redact'), 'argument paths') : [];
  const settings = readSettings(r, o, p, what);
  if (policy) placeGuards(r, settings, p, `Tool "${toolName}"`, policy, idempotency);
  const written = readChecks(r, o, p, what);
  if (!policy) return null;
  const checks = placeToolChecks(r, written, p, `Tool "${toolName}"`, policy);
  return {
    policy,
    idempotency,
    approvers,
    approvalSlaHours,
    inputSchemaSha256,
    editable,
    redact,
    approvalRules: checks.rules,
    validate: checks.validate,
    inputSchema: checks.inputSchema,
    ...withDefaults(settings),
  };
}
