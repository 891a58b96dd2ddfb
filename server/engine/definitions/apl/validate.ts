/**
 * `validateSource`: YAML source → `ValidatedDeployment`, or every error found (at most 100), each with a
 * code, a path, the 1-based line in the source and what to do. Never throws.
 */
import { PROCESS_KEY } from './bindings.js';
import { type AplError, APL, describe, didYouMean, ErrorSink } from './errors.js';
import { has, isObj, type Obj, Reader } from './fields.js';
import { checkServerGuards } from './guards.js';
import { parseSource } from './parse.js';
import { validateProcess } from './process.js';
import { validateToolServer } from './toolserver.js';
import type { FrozenProcess, ToolServerSpec } from '../../../shared/types.js';

const KINDS = ['ToolServer', 'Process'];

/** What a valid deployment yields; the engine stores it (tool servers upserted, a new version per process). */
export interface ValidatedDeployment {
  toolServers: ToolServerSpec[];
  processes: FrozenProcess[];
}

/** What the validator needs to know beyond the source itself. */
export interface ValidationContext {
  /** tool servers already deployed in the project (the source's own ToolServer documents override these) */
  toolServers: Map<string, ToolServerSpec>;
  /** process keys already deployed in the project (targets of `delegate:<key>`) */
  processKeys: Set<string>;
  /** ABADA_AGENT_ALLOWED_MODELS; null = no restriction */
  allowedModels: string[] | null;
  /** ABADA_AGENT_ALLOWED_TOOLS (server names or server/tool refs); null = no restriction */
  allowedTools: string[] | null;
  /** models with a price in force (deploy); a `budget_usd` node needs one for each of its models. Absent = not checked */
  pricedModels?: ReadonlySet<string> | null;
}

export type ValidationResult =
  | { ok: true; deployment: ValidatedDeployment }
  | { ok: false; errors: AplError[] };

export function validateSource(source: string, ctx: ValidationContext): ValidationResult {
  const sink = new ErrorSink();
  try {
    // run returns a deployment only when it reported no error
    const deployment = run(typeof source === 'string' ? source : String(source ?? ''), ctx, sink);
    if (deployment) return { ok: true, deployment };
  } catch (e) {
    sink.add(
      APL.INTERNAL,
      -1,
      '',
      `The validator failed unexpectedly (${e instanceof Error ? e.message.slice(0, 200) : 'unknown error'}). Simplify the source and report this.`,
    );
  }
  return { ok: false, errors: sink.sorted() };
}

/** A document read as a mapping, and its place in the source. */
type DocAt = { index: number; doc: Obj };

function run(source: string, ctx: ValidationContext, sink: ErrorSink): ValidatedDeployment | null {
  const docs = parseSource(source, sink);
  if (sink.errors.length > 0 && docs.length === 0) return null;
  const content = docs.filter((d) => d.broken || d.value !== null);
  if (content.length === 0) {
    const message = 'The source holds no documents. Add a ToolServer or Process document (kind: …).';
    sink.add(APL.DOC_EMPTY, -1, '', message, { line: 1, column: 1 });
    return null;
  }
  const { serverDocs, processDocs, brokenNames } = classify(content, sink);
  const { servers, toolServers } = readServers(serverDocs, ctx, sink, brokenNames);
  const processKeys = readProcessKeys(processDocs, ctx, sink);
  const processes: FrozenProcess[] = [];
  for (const { index, doc } of processDocs) {
    const p = validateProcess(new Reader(sink, index), doc, {
      servers,
      processKeys,
      allowedTools: ctx.allowedTools ?? null,
      allowedModels: ctx.allowedModels ?? null,
      pricedModels: ctx.pricedModels ?? null,
      brokenNames,
      sourceServers: new Set(toolServers.map((t) => t.name)),
    });
    if (p) processes.push(p);
  }
  if (sink.errors.length > 0) return null;
  return { toolServers, processes };
}

/** The documents of each kind, and the names of those that failed to parse. */
function classify(content: ReturnType<typeof parseSource>, sink: ErrorSink) {
  const out = { serverDocs: [] as DocAt[], processDocs: [] as DocAt[], brokenNames: new Set<string>() };
  for (const d of content) {
    if (d.broken) {
      if (d.salvage?.kind === 'ToolServer') out.brokenNames.add(`server:${d.salvage.name}`);
      if (d.salvage?.kind === 'Process') out.brokenNames.add(`process:${d.salvage.name}`);
      continue;
    }
    const r = new Reader(sink, d.index);
    if (!isObj(d.value)) {
      r.err(
        APL.DOC_KIND,
        '',
        `A document must be a mapping starting with kind: ToolServer or kind: Process, not ${describe(d.value)}.`,
      );
      continue;
    }
    const kind = has(d.value, 'kind') ? d.value.kind : undefined;
    if (kind === undefined || kind === null) {
      r.err(APL.DOC_KIND, '', 'The document has no "kind": add kind: ToolServer or kind: Process.');
    } else if (kind === 'ToolServer') out.serverDocs.push({ index: d.index, doc: d.value });
    else if (kind === 'Process') out.processDocs.push({ index: d.index, doc: d.value });
    else {
      r.err(
        APL.DOC_KIND,
        'kind',
        `Unknown kind ${describe(kind)}: use ToolServer or Process.${didYouMean(String(kind), KINDS)}`,
      );
    }
  }
  return out;
}

/** The source's own tool servers override the deployed ones. */
function readServers(serverDocs: DocAt[], ctx: ValidationContext, sink: ErrorSink, brokenNames: Set<string>) {
  const servers = new Map<string, ToolServerSpec>(ctx.toolServers ?? []);
  const toolServers: ToolServerSpec[] = [];
  const serverAt = new Map<string, number>();
  const checked: { r: Reader; spec: ToolServerSpec }[] = [];
  for (const { index, doc } of serverDocs) {
    const r = new Reader(sink, index);
    const spec = validateToolServer(r, doc);
    const name = typeof doc.name === 'string' ? doc.name : null;
    if (name !== null && serverAt.has(name)) {
      r.err(
        APL.DOC_DUPLICATE_SERVER,
        'name',
        `ToolServer "${name}" is already defined in documents[${serverAt.get(name)}]. Keep one definition.`,
      );
      continue;
    }
    if (name !== null) serverAt.set(name, index);
    if (spec) {
      servers.set(spec.name, spec);
      toolServers.push(spec);
      checked.push({ r, spec });
    } else if (name !== null) {
      // a broken definition shadows the deployed one; refs to it are not reported again as unknown
      servers.delete(name);
      brokenNames.add(`server:${name}`);
    }
  }
  // a guard may name a tool of any server: checked once every server is known
  for (const { r, spec } of checked) checkServerGuards(r, spec, servers, brokenNames);
  return { servers, toolServers };
}

/** Deployed process keys plus the source's own: what `delegate:<key>` may name. */
function readProcessKeys(processDocs: DocAt[], ctx: ValidationContext, sink: ErrorSink) {
  const processKeys = new Set<string>(ctx.processKeys ?? []);
  const keyAt = new Map<string, number>();
  for (const { index, doc } of processDocs) {
    const key = has(doc, 'key') ? doc.key : undefined;
    if (typeof key !== 'string' || !PROCESS_KEY.test(key)) continue;
    if (keyAt.has(key)) {
      new Reader(sink, index).err(
        APL.DOC_DUPLICATE_PROCESS,
        'key',
        `Process "${key}" is already defined in documents[${keyAt.get(key)}]. Keep one definition or change the key.`,
      );
      continue;
    }
    keyAt.set(key, index);
    processKeys.add(key);
  }
  return processKeys;
}
