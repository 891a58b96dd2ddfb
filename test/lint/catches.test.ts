/**
 * Every catch in server/ rethrows, narrows by a named error class or code (and rethrows the rest), or
 * logs and counts; any other is an exception, listed in EXCEPTIONS with its reason. STYLE.md: a fast
 * path never hides an error, and a `catch {}` that turns any error (a TypeError included) into the slow
 * path hides bugs. The code is read with the TypeScript parser, one file at a time (no type checker):
 * try/catch clauses, `.catch(handler)` and `.then(onFulfilled, onRejected)`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');

type Kind = 'rethrows' | 'narrows' | 'logs and counts' | 'exception';

/** Helpers that test an error by its class or code: passing the caught value to one narrows. */
const NARROWING_HELPERS = new Set([
  'isUnavailable', // server/errors.ts: the database could not be reached (SQLSTATE, errno, pg's messages)
  'isRetryable', // server/client: the engine could not be reached, or answered UNAVAILABLE
  'isProviderRefusal', // server/shared/provider-errors.ts: openid-client refused the provider's answer (by class and code)
  'isProviderUnreachable', // server/shared/provider-errors.ts: fetch failed, or openid-client's timeout
]);
const LOG_METHODS = new Set(['trace', 'debug', 'info', 'warn', 'error', 'fatal']);
/** A handler passed by name that hands the error on: the executor's reject of a new Promise. */
const FORWARDERS = new Set(['reject']);

const PENDING = 'pending: the statement-layer rewrite';
/** The files another engineer is rewriting: their catches wait for that rewrite, and only theirs may. */
const REWRITTEN =
  /^server\/(engine\/(journal|tasks|lease|history)\/|engine\/instances\/pending\.ts|engine\/common\/sql\.ts|db\/|worker\/batcher\.ts)/;

/**
 * The catches that neither rethrow, narrow nor log and count, by `file#nearest named function` (`:n`
 * for the nth catch of that function), each with why it may stay so.
 */
const EXCEPTIONS: Record<string, string> = {
  // last stops: the error ends one request, one command or the process, and says so
  'server/auth/routes.ts#authRoutes':
    "the sign-in routes' last stop: logged as an internal error, and a 502 page if nothing was sent yet",
  'server/graphql/server.ts#createEngineServer':
    "the dashboard handler's last stop: logged as an internal error (as GraphQL's are, uncounted), answered 500",
  'server/cli.ts#main':
    "the CLI's last stop: the message is printed (JSON with --json) and becomes exit code 1 (REFUSED)",
  'server/main.ts#(module)':
    "`npm start`'s last stop: one line for an error the operator can act on, else the stack; exit code 1",
  'server/main.ts#stop':
    'shutting down on a signal: the failed close is printed and the process exits all the same',
  'server/worker/loop.ts#startWorker':
    "the worker's last stop: logged as worker.fatal, it becomes handle.fatal (exit code 1) once running tasks drain",
  'server/worker/loop.ts#launch':
    'a task runner that crashed is logged as task.crash; its lease lapses and the engine hands the task on',
  'server/worker/task.ts#run':
    "a task's last stop: settle sorts the error (let go, drop, retry) and fails the attempt as WORKER_ERROR otherwise",
  'server/worker/task.ts#flushBeforeLeaving':
    'returns the refused flush as the error the attempt settles on: settle sorts it',
  'server/demo/crm-server.ts#route': "the demo CRM's last stop: a JSON-RPC internal error with the message",
  'server/demo/model-server.ts#route':
    "the demo model's last stop: an OpenAI-style server_error with the message",
  'server/demo/mcp-faults.ts#startMcpFaultProxy':
    "the fault proxy's last stop: a 502, or the socket dropped once the answer has started",
  'server/demo/oidc-provider.ts#startDemoProvider': "the demo provider's last stop: a 500 with the message",
  'server/demo/model-server.ts#handleChat':
    'a scripted answer that throws is the model failing (HTTP 500): the worker moves on as with a real model',

  'server/web/handler.ts#startDashboard':
    "the dashboard's start failing: logged with what to do, and / answers an error page while the API keeps serving",

  // a promise that rejects for whoever awaits it, and is only kept from ending the process unhandled
  'server/main.ts#main:2':
    'the dashboard build reports its own failure (startDashboard logs it); the line here is for success only',
  'server/web/build.ts#startWebBuild:2':
    '`done` still rejects for whoever awaits it; this keeps a build nobody awaits from ending the process',

  // closing what is being left: the work is over either way
  'server/telemetry/sdk.ts#shutdown':
    'spans that cannot be flushed at exit are lost either way; the process must still close',
  'server/demo/demo.ts#close':
    'closing the demo: the worker stops with the engine, whatever its stop answers',
  'server/worker/mcp.ts#openSession:2':
    'closing a session whose connect failed, before throwing ToolSetupError with the cause',
  'server/worker/mcp.ts#closeAll': 'closing MCP sessions on the way out: nothing is left to act on a failure',
  'server/engine/events/listener.ts#start:3':
    "closing a client whose connect failed, before rethrowing the connect's error",
  'server/engine/events/listener.ts#scheduleReconnect:1':
    'closing the lost LISTEN client: a new one replaces it',
  'server/engine/events/listener.ts#close': 'closing the LISTEN client at shutdown',
  'server/engine/webhooks/dispatch.ts#send:2': 'dropping the unread body of an answer already recorded',

  // the failure is the answer: probes and reconnection
  'server/graphql/server.ts#serveHealth':
    '/healthz answers the ping: any failure is a 503, and a probe every few seconds must not flood the log',
  'server/engine/common/health.ts#readiness': '/readyz answers the ping: any failure is database: false',
  'server/engine/events/listener.ts#serial':
    "keeps the serial chain alive after a failed step; the step's own promise carries its failure",
  'server/engine/events/listener.ts#onStream':
    'a failed catch-up is repaired by reconnecting, whose catch-up emits the hole; /readyz says listening: false',
  'server/engine/events/listener.ts#scheduleReconnect:2':
    'the reconnection loop: every failed connect tries again 500 ms later; /readyz says listening: false',

  // handed on, or recorded where an operator looks
  'server/engine/common/runner.ts#tick':
    "a failed round goes to the loop's onError: server/app.ts logs it and counts abada_background_failures_total",
  'server/auth/index.ts#createAuth':
    'a failed session-refresh round goes to the engine error log; the next round (half the interval) tries again',
  'server/engine/instances/jobs.ts#runJobs':
    "a job's failure is stored on its row (last_error, attempts; FAILED after 10), backed off; the savepoint keeps the rest",
  'server/engine/approvals/decide.ts#traceDecision':
    'tracing only, after the decision committed: a failed read costs the span its parent, never the answer',
  'server/metrics/serve.ts#serveMetrics':
    "a failed scrape is logged and answered 503: Prometheus's own up and scrape errors count it, not /metrics",
  'server/worker/task.ts#fail':
    'an unreported failure is logged (task.fail_unreported; the worker has no /metrics) and the lease lapses',
  'server/worker/lease.ts#extend':
    'a failed heartbeat is logged and tried on the next beat; the local deadline drops the task if none gets through',

  // errors with no class or code to narrow by
  'server/auth/routes.ts#callback:1':
    'a pending-sign-in cookie that does not open (crypto and JSON each throw their own kind) is no sign-in: start again',
  'server/engine/definitions/apl/schema.ts#compile':
    "ajv reports a schema it cannot compile as a plain Error: its first line is the author's answer",
  'server/engine/definitions/apl/validate.ts#validateSource':
    'validateSource never throws: a validator bug is APL-INTERNAL-001 ("report this"), which the fuzz tests fail on',

  // files another engineer is rewriting
  'server/db/client.ts#endWithin:2':
    "closing the connection that terminated the pool's last backends: one that fails to close is gone already",
  'server/db/embedded.ts#startEmbeddedPostgres:2':
    'stopping a server that failed to start, on the way to raising the start-up error itself',
  'server/db/migrate.ts#runMigrations':
    'the advisory unlock after the migrations: a failure ends the session, which releases the lock anyway',
  'server/engine/journal/commands.ts#journalBatch:2':
    "marks an entry's answer as handled until the caller awaits it; the caller gets the error itself",
  'server/engine/journal/transaction.ts#ownTransaction:2':
    "a failed ROLLBACK keeps its error so the connection is discarded, not pooled; the body's error is raised",
  'server/engine/journal/group.ts#run':
    'named reasons run each call alone and are counted (abada_fast_path_fallbacks_total); anything else rejects every call of the group',
  'server/engine/journal/group.ts#settle': "hands the call's own error to its caller (reject)",
  'server/worker/batcher.ts#dispatch':
    "a refused or unanswered batch runs each call alone (counted in the batcher's fallbacks); anything else rejects every call of the turn",
  'server/worker/batcher.ts#settleAlone': "hands the call's own error to its caller (reject)",
  'server/db/pg.ts#transaction:1':
    "marks BEGIN's rejection handled the moment it is sent; the body's statements and COMMIT still see it",
  'server/db/pg.ts#transaction:3':
    "a failed BEGIN made the body fail too: the body's error is the one raised",
  'server/db/pg.ts#transaction:4':
    "a failed ROLLBACK keeps its error so the connection is discarded, not pooled; the body's error is raised",
};

interface Handler {
  /** the catch block or the handler's body; null for a handler passed by name */
  body: ts.Node | null;
  /** the caught value's name */
  param: string | null;
  /** a handler passed by name: its text */
  ref: string | null;
}

interface Site {
  key: string;
  line: number;
  via: 'try' | 'promise';
  kind: Kind;
}

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...sources(rel));
    else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) out.push(rel);
  }
  return out;
}

function handlerOf(node: ts.Node): Handler | null {
  if (ts.isCatchClause(node)) {
    const name = node.variableDeclaration?.name;
    return { body: node.block, param: name && ts.isIdentifier(name) ? name.text : null, ref: null };
  }
  if (!ts.isCallExpression(node) || !ts.isPropertyAccessExpression(node.expression)) return null;
  const method = node.expression.name.text;
  const fn =
    method === 'catch' && node.arguments.length === 1
      ? node.arguments[0]
      : method === 'then' && node.arguments.length === 2
        ? node.arguments[1]
        : null;
  if (!fn) return null;
  if (ts.isArrowFunction(fn) || ts.isFunctionExpression(fn)) {
    const first = fn.parameters[0]?.name;
    return { body: fn.body, param: first && ts.isIdentifier(first) ? first.text : null, ref: null };
  }
  return { body: null, param: null, ref: fn.getText() };
}

/** The handler's own nodes: a nested function runs later, or never, so what it does is not the handler's. */
function ownNodes(body: ts.Node): ts.Node[] {
  const out: ts.Node[] = [body];
  const visit = (n: ts.Node) => {
    if (ts.isFunctionLike(n)) return;
    out.push(n);
    ts.forEachChild(n, visit);
  };
  ts.forEachChild(body, visit);
  return out;
}

function isCaught(expr: ts.Node, param: string): boolean {
  let e = expr;
  while (ts.isParenthesizedExpression(e) || ts.isAsExpression(e) || ts.isNonNullExpression(e))
    e = e.expression;
  return ts.isIdentifier(e) && e.text === param;
}

/** `e instanceof SomeError` (not Error itself), `e.code` / `e.name`, or `isUnavailable(e)`. */
function testsError(n: ts.Node, param: string): boolean {
  if (ts.isBinaryExpression(n) && n.operatorToken.kind === ts.SyntaxKind.InstanceOfKeyword)
    return isCaught(n.left, param) && !['Error', 'Object'].includes(n.right.getText());
  if (ts.isPropertyAccessExpression(n))
    return ['code', 'name'].includes(n.name.text) && isCaught(n.expression, param);
  if (ts.isCallExpression(n)) {
    const callee = ts.isPropertyAccessExpression(n.expression) ? n.expression.name : n.expression;
    return NARROWING_HELPERS.has(callee.getText()) && n.arguments.some((a) => isCaught(a, param));
  }
  return false;
}

function rethrows(n: ts.Node): boolean {
  return ts.isThrowStatement(n) || (ts.isCallExpression(n) && n.expression.getText() === 'Promise.reject');
}

/** `log.warn(…)`, `this.log.error(…)`, `logger.info(…)`, `console.error(…)` / `console.warn(…)`. */
function logs(n: ts.Node): boolean {
  if (!ts.isCallExpression(n) || !ts.isPropertyAccessExpression(n.expression)) return false;
  const { expression: on, name } = n.expression;
  const target = ts.isPropertyAccessExpression(on) ? on.name.text : on.getText();
  if (target === 'console') return name.text === 'error' || name.text === 'warn';
  return (target === 'log' || target === 'logger') && LOG_METHODS.has(name.text);
}

/** `counters.x++`, `counters.x += n`, or a metric's `.inc(…)` / `.observe(…)`. */
function counts(n: ts.Node): boolean {
  const counter = (target: ts.Node) => /\bcounters\b/.test(target.getText());
  if (
    (ts.isPostfixUnaryExpression(n) || ts.isPrefixUnaryExpression(n)) &&
    n.operator === ts.SyntaxKind.PlusPlusToken
  )
    return counter(n.operand);
  if (ts.isBinaryExpression(n) && n.operatorToken.kind === ts.SyntaxKind.PlusEqualsToken)
    return counter(n.left);
  return (
    ts.isCallExpression(n) &&
    ts.isPropertyAccessExpression(n.expression) &&
    ['inc', 'observe'].includes(n.expression.name.text)
  );
}

function classify(h: Handler): Kind {
  if (!h.body) return h.ref !== null && FORWARDERS.has(h.ref) ? 'rethrows' : 'exception';
  const own = ownNodes(h.body);
  const param = h.param;
  if (own.some(rethrows))
    return param !== null && own.some((n) => testsError(n, param)) ? 'narrows' : 'rethrows';
  return own.some(logs) && own.some(counts) ? 'logs and counts' : 'exception';
}

/** The nearest enclosing function with a name: its own, or the variable or property it is assigned to. */
function enclosingName(node: ts.Node): string {
  for (let n = node.parent; n; n = n.parent) {
    if (!ts.isFunctionLike(n)) continue;
    if (ts.isConstructorDeclaration(n)) return 'constructor';
    const own = (n as { name?: ts.Node }).name;
    if (own && (ts.isIdentifier(own) || ts.isPrivateIdentifier(own) || ts.isStringLiteral(own)))
      return own.text;
    const p = n.parent;
    if (
      (ts.isVariableDeclaration(p) || ts.isPropertyAssignment(p) || ts.isPropertyDeclaration(p)) &&
      ts.isIdentifier(p.name)
    )
      return p.name.text;
  }
  return '(module)';
}

/** Every catch site of a source text, keyed `file#name`, with `:n` where a function has several. */
function catchSites(file: string, text: string): Site[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: (Omit<Site, 'key'> & { name: string })[] = [];
  const visit = (node: ts.Node) => {
    const h = handlerOf(node);
    if (h) {
      const line = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
      const via = ts.isCatchClause(node) ? 'try' : 'promise';
      found.push({ name: `${file}#${enclosingName(node)}`, line, via, kind: classify(h) });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found.map(({ name, ...site }, i) => {
    const several = found.filter((f) => f.name === name).length > 1;
    const nth = found.slice(0, i + 1).filter((f) => f.name === name).length;
    return { key: several ? `${name}:${nth}` : name, ...site };
  });
}

describe('catches in server/', () => {
  const sites = sources('server').flatMap((f) => catchSites(f, readFileSync(path.join(ROOT, f), 'utf8')));
  const exceptions = sites.filter((s) => s.kind === 'exception');

  it('every catch rethrows, narrows, or logs and counts, or is a listed exception with its reason', () => {
    const by = (k: Kind) => sites.filter((s) => s.kind === k).length;
    const table = exceptions.map((s) => `  ${s.key} (line ${s.line}): ${EXCEPTIONS[s.key] ?? 'UNLISTED'}`);
    console.info(
      `${sites.length} catch sites in server/ (${sites.filter((s) => s.via === 'try').length} try/catch, ` +
        `${sites.filter((s) => s.via === 'promise').length} on a promise): ${by('rethrows')} rethrow, ` +
        `${by('narrows')} narrow, ${by('logs and counts')} log and count, ${exceptions.length} exceptions:\n` +
        table.join('\n'),
    );
    expect(sites.length).toBeGreaterThan(100);
    const unlisted = exceptions.filter((s) => !(s.key in EXCEPTIONS)).map((s) => `${s.key} (line ${s.line})`);
    expect(
      unlisted,
      'narrow these to the errors they expect and rethrow the rest, or log and count them, or list them in EXCEPTIONS with the reason',
    ).toEqual([]);
  });

  it('lists no exception that is gone, so the table stays true', () => {
    const keys = new Set(exceptions.map((s) => s.key));
    expect(Object.keys(EXCEPTIONS).filter((k) => !keys.has(k))).toEqual([]);
  });

  it('leaves as pending only the catches of the files being rewritten', () => {
    const pending = Object.entries(EXCEPTIONS).filter(([, reason]) => reason === PENDING);
    expect(pending.map(([key]) => key).filter((key) => !REWRITTEN.test(key))).toEqual([]);
  });
});

describe('the classification', () => {
  const kinds = (body: string) => catchSites('x.ts', `async function f() {\n${body}\n}`).map((s) => s.kind);
  it.each([
    ['try { a(); } catch {}', 'exception'],
    ['try { a(); } catch (e) { if (!(e instanceof SyntaxError)) throw e; }', 'narrows'],
    ["try { a(); } catch (e) { if ((e as { code?: unknown }).code !== 'ENOENT') throw e; }", 'narrows'],
    ['try { a(); } catch (e) { throw new Wrapped(e); }', 'rethrows'],
    ['try { a(); } catch (e) { setTimeout(() => { throw e; }); }', 'exception'],
    [
      "try { a(); } catch (e) { this.log.warn({ err: e }, 'slow path'); ctx.counters.fallbacks++; }",
      'logs and counts',
    ],
    ["try { a(); } catch (e) { log.warn({ err: e }, 'slow path'); }", 'exception'],
    ['await p.catch(() => {});', 'exception'],
    ['await p.catch((e) => { if (isUnavailable(e)) return null; throw e; });', 'narrows'],
    ['await p.catch(onError);', 'exception'],
    ['await p.then(ok, reject);', 'rethrows'],
  ])('%s: %s', (src, kind) => {
    expect(kinds(src)).toEqual([kind]);
  });

  it('names a catch by its nearest named function, and numbers several in one', () => {
    const src = 'class A { m() { try {} catch {} } }\nconst g = () => { p.catch(() => 1); try {} catch {} };';
    expect(catchSites('x.ts', src).map((s) => s.key)).toEqual(['x.ts#m', 'x.ts#g:1', 'x.ts#g:2']);
  });
});
