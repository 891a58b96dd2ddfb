/** approvals, decide, incidents. */
import { type Command, EXIT, emit, parseArgs, table, usage } from './args.js';
import { gql } from './client.js';

interface ApprovalNode {
  id: string;
  state: string;
  toolRef: string;
  digest: string;
  candidateGroups: string[];
  escalated: boolean;
  arguments: unknown;
  createdAt: string;
  processInstanceId: string;
}

export const approvals: Command = {
  name: 'approvals',
  summary: 'list approvals you may see',
  help: 'abada approvals [--state PENDING|APPROVED|REJECTED|RETIRED] [--mine] [--first N] [--json]',
  async run(argv, io) {
    const { flags, positionals } = parseArgs(argv, {
      state: 'string',
      mine: 'boolean',
      first: 'string',
      json: 'boolean',
    });
    if (positionals.length) throw usage('approvals takes no arguments.');
    const d = await gql<{ approvals: { totalCount: number; edges: { node: ApprovalNode }[] } }>(
      io,
      `query($state: ApprovalState, $mine: Boolean, $first: Int) { approvals(state: $state, mine: $mine, first: $first) {
        totalCount edges { node { id state toolRef digest candidateGroups escalated arguments createdAt processInstanceId } } } }`,
      {
        state: flags.state ? String(flags.state).toUpperCase() : null,
        mine: flags.mine ?? null,
        first: flags.first ? Number(flags.first) : null,
      },
    );
    const nodes = d.approvals.edges.map((e) => e.node);
    emit(io, { totalCount: d.approvals.totalCount, approvals: nodes }, () =>
      table([
        ['ID', 'STATE', 'TOOL', 'GROUPS', 'DIGEST', 'ARGUMENTS'],
        ...nodes.map((a) => [
          a.id,
          a.state + (a.escalated ? '!' : ''),
          a.toolRef,
          a.candidateGroups.join(','),
          a.digest.slice(0, 12),
          JSON.stringify(a.arguments),
        ]),
      ]),
    );
    return EXIT.OK;
  },
};

export const decide: Command = {
  name: 'decide',
  summary: 'approve or reject an approval as the human in ABADA_TOKEN',
  help: `abada decide APPROVAL_ID approve|reject [-m COMMENT] [--json]

Fetches the approval first and decides on the digest it shows, so a proposal that changed in between
is refused (STALE_DIGEST) rather than approved blindly. Reject needs -m.`,
  async run(argv, io) {
    const { positionals, flags } = parseArgs(argv, { message: 'string', json: 'boolean' }, { m: 'message' });
    const [id, verdict] = positionals;
    const decision = verdict?.toUpperCase();
    if (positionals.length !== 2 || (decision !== 'APPROVE' && decision !== 'REJECT'))
      throw usage('Usage: abada decide ID approve|reject -m COMMENT');
    const seen = await gql<{
      approval: { id: string; digest: string; state: string; toolRef: string } | null;
    }>(io, `query($id: ID!) { approval(id: $id) { id digest state toolRef } }`, { id });
    if (!seen.approval) {
      if (io.json) io.out(JSON.stringify({ error: { code: 'NOT_FOUND', message: `approval ${id}` } }));
      else io.err(`NOT_FOUND: no approval ${id} that you may see.`);
      return EXIT.REFUSED;
    }
    const d = await gql<{
      decideApproval: { id: string; state: string; decidedBy: string | null; digest: string };
    }>(
      io,
      `mutation($input: DecideApprovalInput!) { decideApproval(input: $input) { id state decidedBy digest comment } }`,
      { input: { approvalId: id, decision, comment: flags.message ?? null, digest: seen.approval.digest } },
    );
    emit(io, d.decideApproval, () => [
      `${d.decideApproval.id} ${d.decideApproval.state} by ${d.decideApproval.decidedBy ?? '?'} (${seen.approval!.toolRef}, digest ${d.decideApproval.digest.slice(0, 12)})`,
    ]);
    return EXIT.OK;
  },
};

export const incidents: Command = {
  name: 'incidents',
  summary: 'list incidents',
  help: 'abada incidents [--state OPEN|RESOLVED] [--first N] [--json]',
  async run(argv, io) {
    const { flags, positionals } = parseArgs(argv, { state: 'string', first: 'string', json: 'boolean' });
    if (positionals.length) throw usage('incidents takes no arguments.');
    const d = await gql<{
      incidents: {
        totalCount: number;
        edges: {
          node: {
            id: string;
            type: string;
            state: string;
            message: string;
            taskId: string | null;
            createdAt: string;
          };
        }[];
      };
    }>(
      io,
      `query($state: IncidentState, $first: Int) { incidents(state: $state, first: $first) {
        totalCount edges { node { id type state message processInstanceId taskId attempt workerId createdAt } } } }`,
      {
        state: flags.state ? String(flags.state).toUpperCase() : null,
        first: flags.first ? Number(flags.first) : null,
      },
    );
    const nodes = d.incidents.edges.map((e) => e.node);
    emit(io, { totalCount: d.incidents.totalCount, incidents: nodes }, () =>
      table([['ID', 'TYPE', 'STATE', 'MESSAGE'], ...nodes.map((i) => [i.id, i.type, i.state, i.message])]),
    );
    return EXIT.OK;
  },
};
