/** approvals, decide, incidents. */
import { type Command, EXIT, emit, parseArgs, table, usage } from './args.js';
import type { VariablesOf } from '../client/index.js';
import { gql } from './client.js';
import { ApprovalDigest, Approvals, DecideApproval, Incidents, RevokeApproval } from './documents.js';

/** Checked by the engine; the CLI passes what was typed, upper-cased. */
type ApprovalState = NonNullable<VariablesOf<typeof Approvals>['state']>;
type IncidentState = NonNullable<VariablesOf<typeof Incidents>['state']>;

export const approvals: Command = {
  name: 'approvals',
  summary: 'list approvals you may see',
  help: 'abada approvals [--state PENDING|APPROVED|REJECTED|RETIRED|REVOKED] [--mine] [--first N] [--json]',
  async run(argv, io) {
    const { flags, positionals } = parseArgs(argv, {
      state: 'string',
      mine: 'boolean',
      first: 'string',
      json: 'boolean',
    });
    if (positionals.length) throw usage('approvals takes no arguments.');
    const d = await gql(io, Approvals, {
      state: flags.state ? (String(flags.state).toUpperCase() as ApprovalState) : null,
      mine: (flags.mine as boolean | undefined) ?? null,
      first: flags.first ? Number(flags.first) : null,
    });
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
    const seen = await gql(io, ApprovalDigest, { id });
    if (!seen.approval) {
      if (io.json) io.out(JSON.stringify({ error: { code: 'NOT_FOUND', message: `approval ${id}` } }));
      else io.err(`NOT_FOUND: no approval ${id} that you may see.`);
      return EXIT.REFUSED;
    }
    const d = await gql(io, DecideApproval, {
      input: {
        approvalId: id,
        decision,
        comment: (flags.message as string | undefined) ?? null,
        digest: seen.approval.digest,
      },
    });
    emit(io, d.decideApproval, () => [
      `${d.decideApproval.id} ${d.decideApproval.state} by ${d.decideApproval.decidedBy ?? '?'} (${seen.approval!.toolRef}, digest ${d.decideApproval.digest.slice(0, 12)})`,
    ]);
  },
};

export const revoke: Command = {
  name: 'revoke',
  summary: 'withdraw an approval before its call starts (who decided it, or an admin)',
  help: `abada revoke APPROVAL_ID -m REASON [--json]

The approval becomes REVOKED and the agent reads REASON as the rejection. Once the call started the
engine refuses (ALREADY_EXECUTING, exit 1).`,
  async run(argv, io) {
    const { positionals, flags } = parseArgs(argv, { message: 'string', json: 'boolean' }, { m: 'message' });
    const [id] = positionals;
    if (positionals.length !== 1 || !flags.message) throw usage('Usage: abada revoke ID -m REASON');
    const d = await gql(io, RevokeApproval, { input: { approvalId: id, comment: String(flags.message) } });
    emit(io, d.revokeApproval, () => [
      `${d.revokeApproval.id} REVOKED (${d.revokeApproval.toolRef}): ${d.revokeApproval.comment ?? ''}`,
    ]);
  },
};

export const incidents: Command = {
  name: 'incidents',
  summary: 'list incidents',
  help: 'abada incidents [--state OPEN|RESOLVED] [--first N] [--json]',
  async run(argv, io) {
    const { flags, positionals } = parseArgs(argv, { state: 'string', first: 'string', json: 'boolean' });
    if (positionals.length) throw usage('incidents takes no arguments.');
    const d = await gql(io, Incidents, {
      state: flags.state ? (String(flags.state).toUpperCase() as IncidentState) : null,
      first: flags.first ? Number(flags.first) : null,
    });
    const nodes = d.incidents.edges.map((e) => e.node);
    emit(io, { totalCount: d.incidents.totalCount, incidents: nodes }, () =>
      table([['ID', 'TYPE', 'STATE', 'MESSAGE'], ...nodes.map((i) => [i.id, i.type, i.state, i.message])]),
    );
  },
};
