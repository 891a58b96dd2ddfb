/** suspend, resume, incident resolve|retry, price set|list, key: the operator's day-to-day calls. */
import { type Command, CliError, EXIT, emit, type Flags, type Io, parseArgs, table, usage } from './args.js';
import { gql } from './client.js';
import {
  IncidentById,
  ModelPrices,
  ResolveIncident,
  ResumeProcess,
  RetryTask,
  SetModelPrice,
  StepByIdempotencyKey,
  SuspendProcess,
} from './documents.js';

export const suspend: Command = {
  name: 'suspend',
  summary: 'suspend a process instance (its work is handed back until resume)',
  help: 'abada suspend ID [--json]\n\nExit 1 when the engine refuses (not ACTIVE, not found, not an admin).',
  async run(argv, io) {
    const { positionals } = parseArgs(argv, { json: 'boolean' });
    if (positionals.length !== 1) throw usage('suspend needs one instance ID.');
    const d = await gql(io, SuspendProcess, { id: positionals[0] });
    emit(io, d.suspendProcess, () => [`${d.suspendProcess.id} ${d.suspendProcess.state}`]);
  },
};

export const resume: Command = {
  name: 'resume',
  summary: 'resume a suspended process instance',
  help: 'abada resume ID [--json]\n\nExit 1 when the engine refuses (not SUSPENDED, not found, not an admin).',
  async run(argv, io) {
    const { positionals } = parseArgs(argv, { json: 'boolean' });
    if (positionals.length !== 1) throw usage('resume needs one instance ID.');
    const d = await gql(io, ResumeProcess, { id: positionals[0] });
    emit(io, d.resumeProcess, () => [`${d.resumeProcess.id} ${d.resumeProcess.state}`]);
  },
};

/** `yes`/`no` (or true/false) for --happened; absent stays undefined. */
function happenedFlag(v: unknown): boolean | null {
  if (v === undefined) return null;
  const s = String(v).toLowerCase();
  if (s === 'yes' || s === 'true') return true;
  if (s === 'no' || s === 'false') return false;
  throw usage('--happened must be yes or no.');
}

function jsonFlag(v: unknown): unknown {
  if (v === undefined) return null;
  try {
    return JSON.parse(String(v));
  } catch (e) {
    if (!(e instanceof SyntaxError)) throw e;
    throw usage(`--result must be JSON: ${e.message}`);
  }
}

const INCIDENT: Record<string, (id: string, flags: Flags, io: Io) => Promise<void>> = {
  async resolve(id, flags, io) {
    if (!flags.message) throw usage('incident resolve needs -m COMMENT: say what you checked.');
    const d = await gql(io, ResolveIncident, {
      input: {
        id,
        comment: String(flags.message),
        happened: happenedFlag(flags.happened),
        result: jsonFlag(flags.result),
      },
    });
    emit(io, d.resolveIncident, () => [`${d.resolveIncident.id} ${d.resolveIncident.type} RESOLVED`]);
  },
  async retry(id, _flags, io) {
    const { incident } = await gql(io, IncidentById, { id });
    if (!incident.taskId)
      throw new CliError(EXIT.REFUSED, `Incident ${id} (${incident.type}) names no task to retry.`, {
        code: 'VALIDATION_FAILED',
      });
    const d = await gql(io, RetryTask, { id: incident.taskId });
    emit(io, d.retryTask, () => [
      `task ${d.retryTask.id} ${d.retryTask.state} on attempt ${d.retryTask.attempt}`,
    ]);
  },
};

export const incident: Command = {
  name: 'incident',
  summary: 'resolve an incident, or retry the failed task it is about',
  help: `abada incident resolve ID -m COMMENT [--happened yes|no] [--result JSON] [--json]
abada incident retry ID [--json]

resolve closes the incident with your comment; for TOOL_OUTCOME_UNKNOWN say whether the call took
effect (--happened) and what it returned (--result), which the agent reads as the call's result.
retry reopens the FAILED task of a TASK_FAILED incident on a fresh attempt (admin) and closes it.
Exit 1 when the engine refuses (already resolved, task not FAILED, not allowed).`,
  async run(argv, io) {
    const { positionals, flags } = parseArgs(
      argv,
      { message: 'string', happened: 'string', result: 'string', json: 'boolean' },
      { m: 'message' },
    );
    const [sub, id, ...extra] = positionals;
    const run = INCIDENT[sub ?? ''];
    if (!run || !id || extra.length) throw usage('Usage: abada incident resolve|retry ID … (see --help)');
    await run(id, flags, io);
  },
};

function usdFlag(v: unknown, name: string): number {
  const n = Number(v);
  if (v === undefined || String(v).trim() === '' || !Number.isFinite(n))
    throw usage(`price set needs --${name} USD (per million tokens), a number.`);
  return n;
}

export const price: Command = {
  name: 'price',
  summary: "set a model's price (admin), list prices",
  help: `abada price set MODEL --input USD --output USD [--json]
abada price list [MODEL] [--history] [--json]

Prices are US dollars per million tokens. set adds a price valid from now (earlier prices are kept);
the engine prices every model call with the price in force, and budget_usd counts it. Engine-wide.`,
  async run(argv, io) {
    const { positionals, flags } = parseArgs(argv, {
      input: 'string',
      output: 'string',
      history: 'boolean',
      json: 'boolean',
    });
    const [sub, model, ...extra] = positionals;
    if (sub === 'set' && model && !extra.length) {
      const d = await gql(io, SetModelPrice, {
        input: {
          model,
          inputUsdPerMTok: usdFlag(flags.input, 'input'),
          outputUsdPerMTok: usdFlag(flags.output, 'output'),
        },
      });
      const p = d.setModelPrice;
      emit(io, p, () => [
        `${p.model}: $${p.inputUsdPerMTok} in, $${p.outputUsdPerMTok} out per MTok from ${p.validFrom}`,
      ]);
      return;
    }
    if (sub !== 'list' || extra.length)
      throw usage('Usage: abada price set MODEL --input USD --output USD | abada price list [MODEL]');
    const d = await gql(io, ModelPrices, { model: model ?? null, history: Boolean(flags.history) });
    emit(io, d.modelPrices, () =>
      table([
        ['MODEL', 'INPUT', 'OUTPUT', 'VALID FROM', 'SET BY'],
        ...d.modelPrices.map((p) => [
          p.model,
          String(p.inputUsdPerMTok),
          String(p.outputUsdPerMTok),
          String(p.validFrom),
          p.setBy ?? '-',
        ]),
      ]),
    );
  },
};

export const key: Command = {
  name: 'key',
  summary: 'which step holds an idempotency key, how it ended, how often it was sent',
  help: `abada key IDEMPOTENCY_KEY [--json]

Prints the instance, task, attempt and step that hold the key, its outcome, and each send the engine
saw: the STARTED that created it, each later attempt that reused it, each lease acquired while it was
STARTED. Exit 1 when no step you may see holds the key.`,
  async run(argv, io) {
    const { positionals } = parseArgs(argv, { json: 'boolean' });
    if (positionals.length !== 1) throw usage('key needs one IDEMPOTENCY_KEY.');
    const d = await gql(io, StepByIdempotencyKey, { key: positionals[0] });
    const k = d.stepByIdempotencyKey;
    if (!k)
      throw new CliError(EXIT.REFUSED, `NOT_FOUND: no step you may see holds key ${positionals[0]}.`, {
        code: 'NOT_FOUND',
      });
    emit(io, k, () => [
      `instance ${k.processInstanceId} task ${k.taskId} attempt ${k.attempt} step ${k.sequence} (${k.toolRef ?? '-'}): ${k.outcome}`,
      `${k.sends.length} send(s):`,
      ...table(
        k.sends.map((s) => [
          s.reason,
          `attempt ${s.attempt}`,
          `step ${s.sequence}`,
          String(s.at),
          s.workerId ?? '-',
        ]),
      ),
    ]);
  },
};
