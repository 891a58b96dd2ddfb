import {
  bindingPolicy,
  type ToolBinding as Binding,
  type DefinitionView,
  deploy,
  listDefinitions,
  listToolServers,
  setCredential,
  type ToolServerView,
} from '../../engine/definitions/index.js';
import type { ApprovalSettings } from '../../shared/types.js';
import { builder } from '../builder.js';

export const ToolPolicy = builder.enumType('ToolPolicy', {
  values: {
    READ: { value: 'read' },
    WRITE: { value: 'write' },
    APPROVAL_REQUIRED: { value: 'approval_required' },
  },
});
export const Idempotency = builder.enumType('Idempotency', {
  values: { KEY: { value: 'key' }, NONE: { value: 'none' } },
});

const ToolGuard = builder
  .objectRef<NonNullable<ApprovalSettings['precondition' | 'lookup']>>('ToolGuard')
  .implement({
    description:
      "A guard of a call (SPEC §11): a read tool, its arguments as a template over the call's arguments, and an expression over the read's answer.",
    fields: (t) => ({
      tool: t.exposeString('tool', { description: 'The read tool, server/tool.' }),
      arguments: t.field({
        type: 'JSON',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the placeholders are APL's, written as a person writes them
        description: '${x}, ${arguments.x} and (in a lookup) ${idempotencyKey} are filled in per call.',
        resolve: (g) => g.arguments ?? {},
      }),
      expression: t.string({
        description: "expect (precondition) or found (lookup): bare names are the read's answer.",
        resolve: (g) => ('expect' in g ? g.expect : g.found),
      }),
    }),
  });

export const ToolBinding = builder.objectRef<Binding>('ToolBinding').implement({
  fields: (t) => ({
    ref: t.exposeString('ref'),
    server: t.exposeString('server'),
    tool: t.exposeString('tool'),
    policy: t.field({ type: ToolPolicy, resolve: (b) => b.policy }),
    idempotency: t.field({ type: Idempotency, resolve: (b) => b.idempotency }),
    transport: t.exposeString('transport'),
    url: t.exposeString('url'),
    command: t.exposeString('command', { nullable: true }),
    args: t.exposeStringList('args'),
    env: t.field({
      type: 'JSON',
      description: 'stdio servers: static environment for the server process.',
      resolve: (b) => b.env ?? {},
    }),
    credential: t.exposeString('credential', { nullable: true }),
    credentialEnv: t.exposeString('credentialEnv', { nullable: true }),
    inputSchemaSha256: t.exposeString('inputSchemaSha256', { nullable: true }),
    approvers: t.exposeStringList('approvers'),
    approvalSlaHours: t.exposeFloat('approvalSlaHours', { nullable: true }),
    editable: t.exposeBoolean('editable'),
    redact: t.exposeStringList('redact'),
    approvalRules: t.field({ type: 'JSON', resolve: (b) => b.approvalRules }),
    precondition: t.field({
      type: ToolGuard,
      nullable: true,
      description: 'Read before the approved call starts; its answer must satisfy the expression.',
      resolve: (b) => bindingPolicy(b).precondition,
    }),
    lookup: t.field({
      type: ToolGuard,
      nullable: true,
      description: 'Settles a write whose outcome is unknown before anything is re-sent.',
      resolve: (b) => bindingPolicy(b).lookup,
    }),
  }),
});

const NodeBindings = builder.objectRef<{ nodeId: string; bindings: Binding[] }>('NodeBindings').implement({
  fields: (t) => ({
    nodeId: t.exposeString('nodeId'),
    bindings: t.field({ type: [ToolBinding], resolve: (n) => n.bindings }),
  }),
});

export const Definition = builder.objectRef<DefinitionView>('Definition').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    key: t.exposeString('key'),
    version: t.exposeInt('version'),
    deployedAt: t.field({ type: 'DateTime', resolve: (d) => d.deployedAt }),
    sourceSha256: t.exposeString('sourceSha256'),
    spec: t.expose('spec', { type: 'JSON', description: 'The frozen process: nodes, variables, bindings.' }),
    bindings: t.field({
      type: [NodeBindings],
      resolve: (d) =>
        d.spec.nodes.flatMap((n) => (n.type === 'agent' ? [{ nodeId: n.id, bindings: n.bindings }] : [])),
    }),
  }),
});

export const ToolServer = builder.objectRef<ToolServerView>('ToolServer').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    version: t.exposeInt('version'),
    transport: t.string({ resolve: (s) => s.spec.transport }),
    url: t.string({ nullable: true, resolve: (s) => s.spec.url }),
    credential: t.string({ nullable: true, resolve: (s) => s.spec.credential }),
    tools: t.field({ type: 'JSON', resolve: (s) => s.spec.tools }),
    updatedAt: t.field({ type: 'DateTime', resolve: (s) => s.updatedAt }),
  }),
});

const DeployResult = builder.objectRef<Awaited<ReturnType<typeof deploy>>>('DeployResult').implement({
  fields: (t) => ({
    definitions: t.field({ type: [Definition], resolve: (r) => r.definitions }),
    toolServers: t.field({ type: [ToolServer], resolve: (r) => r.toolServers }),
  }),
});

builder.queryFields((t) => ({
  definitions: t.field({
    type: [Definition],
    args: { key: t.arg.string() },
    resolve: (_r, { key }, ctx) => listDefinitions(ctx.engine, ctx.actor!, key),
  }),
  toolServers: t.field({
    type: [ToolServer],
    resolve: (_r, _a, ctx) => listToolServers(ctx.engine, ctx.actor!),
  }),
}));

builder.mutationFields((t) => ({
  deploy: t.field({
    type: DeployResult,
    authScopes: { admin: true },
    args: { source: t.arg.string({ required: true }) },
    resolve: (_r, { source }, ctx) => deploy(ctx.engine, ctx.actor!, source),
  }),
  setCredential: t.boolean({
    authScopes: { admin: true },
    args: { name: t.arg.string({ required: true }), secret: t.arg.string({ required: true }) },
    resolve: (_r, { name, secret }, ctx) => setCredential(ctx.engine, ctx.actor!, name, secret),
  }),
}));
