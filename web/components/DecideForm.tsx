'use client';
/**
 * Approve / Reject bound to the digest the person saw; where the tool is editable, approve with changes.
 * Reject stays disabled until a comment is typed. When the engine refuses the decision — the changes are
 * refused by policy or invalid, or the time to decide is over — its message stays in the form and the
 * person's changes stay in the fields, so they can correct them or approve the call as proposed.
 */
import { useRef, useState } from 'react';
import { useMutation } from 'urql';
import { codeOfError, sentence } from '../lib/errors';
import { useShortcut } from '../lib/keys';
import { DecideMutation } from '../lib/queries';
import { ArgumentsEditor, fieldsOf, readEdit } from './approval/ArgumentsEditor';

/** Refusals about the changes themselves: the changed fields are marked with the message. */
const EDIT_REFUSED = new Set(['POLICY_DENIED', 'INVALID_ARGUMENTS']);

export function DecideForm({
  approvalId,
  digest,
  args,
  editable,
  closed = false,
  onDone,
  onRefused,
}: {
  approvalId: string;
  digest: string;
  args: unknown;
  editable: boolean;
  /** the approval is no longer pending (e.g. it expired as the person decided): the form stays to be read */
  closed?: boolean;
  onDone(): void;
  onRefused?(code: string | undefined): void;
}) {
  const [comment, setComment] = useState('');
  const [result, decide] = useMutation(DecideMutation);
  const [done, setDone] = useState<string | null>(null);
  const [editing, setEditing] = useState(false);
  const [fields, setFields] = useState(() => fieldsOf(args));
  const edit = readEdit(args, fields);
  const changed = editing && edit.changes.length > 0;
  const send = async (decision: 'APPROVE' | 'REJECT') => {
    setDone(null);
    const withChanges = decision === 'APPROVE' && changed;
    const r = await decide({
      input: {
        approvalId,
        decision,
        digest,
        comment: comment.trim() || null,
        ...(withChanges ? { arguments: edit.args } : {}),
      },
    });
    if (r.error) {
      onRefused?.(codeOfError(r.error));
      return;
    }
    const pending = r.data?.decideApproval.state === 'PENDING';
    setDone(
      decision === 'REJECT'
        ? 'Rejected. The agent will read your comment.'
        : withChanges && pending
          ? `Approved with your changes: version ${r.data?.decideApproval.version} of the call; the other levels decide it again.`
          : pending
            ? `Approved at your level: level ${r.data?.decideApproval.level} decides next.`
            : withChanges
              ? 'Approved with your changes. The agent will run the call as you changed it and is told what you changed.'
              : 'Approved. The agent will run exactly this call.',
    );
    onDone();
  };
  const needComment = comment.trim() === '';
  const blocked = result.fetching || closed;
  const approveBlocked = blocked || (changed && edit.problems.length > 0);
  const box = useRef<HTMLTextAreaElement>(null);
  // Shift+A approves; Shift+R rejects, or first puts the cursor in the comment a rejection needs
  useShortcut('a', () => !approveBlocked && send('APPROVE'), { shift: true });
  useShortcut('r', () => (needComment ? box.current?.focus() : !blocked && send('REJECT')), { shift: true });
  const code = codeOfError(result.error);
  const refusal = result.error ? sentence(result.error) : null;
  return (
    <form
      className="decide stack"
      onSubmit={(e) => e.preventDefault()}
      aria-label="Decision"
      aria-describedby={refusal ? 'decide-error' : undefined}
    >
      {editable ? (
        <div className="stack">
          <div className="actions">
            <button
              type="button"
              aria-expanded={editing}
              aria-controls="edit-args"
              onClick={() => {
                // closing the fields discards the changes: what is not shown is never sent
                if (editing) setFields(fieldsOf(args));
                setEditing(!editing);
              }}
            >
              {!editing ? 'Change the arguments' : changed ? 'Discard my changes' : 'Close without changes'}
            </button>
          </div>
          <div id="edit-args" hidden={!editing}>
            {editing ? (
              <ArgumentsEditor
                args={args}
                fields={fields}
                onChange={(path, value) => setFields((f) => ({ ...f, [path]: value }))}
                edit={edit}
                describedBy={refusal ? 'decide-error' : undefined}
                invalid={!!code && EDIT_REFUSED.has(code)}
              />
            ) : null}
          </div>
        </div>
      ) : null}
      <label htmlFor="comment">Comment {needComment ? <span className="muted">(required to reject)</span> : null}</label>
      <textarea
        id="comment"
        ref={box}
        rows={3}
        value={comment}
        onChange={(e) => setComment(e.target.value)}
        placeholder="Why — the agent reads this when you reject"
        aria-describedby="reject-hint"
      />
      <div className="actions">
        <button
          type="button"
          className="primary approve"
          aria-keyshortcuts="Shift+A"
          disabled={approveBlocked}
          onClick={() => send('APPROVE')}
        >
          {changed ? 'Approve with changes' : 'Approve'}
        </button>
        <button
          type="button"
          className="danger"
          aria-keyshortcuts="Shift+R"
          disabled={blocked || needComment}
          onClick={() => send('REJECT')}
        >
          Reject
        </button>
      </div>
      {refusal ? (
        <div className="error-box" role="alert" id="decide-error" data-testid="decide-error" data-code={code}>
          <p>{refusal}</p>
          {code && EDIT_REFUSED.has(code) ? (
            <p className="small">Your changes are kept in the fields above.</p>
          ) : null}
        </div>
      ) : null}
      {done ? (
        <p className="ok-box" role="status">
          {done}
        </p>
      ) : null}
      <p className="muted small">
        Keys: <kbd>Shift</kbd>+<kbd>A</kbd> approve · <kbd>Shift</kbd>+<kbd>R</kbd> reject (comment first)
      </p>
      <p id="reject-hint" className="muted small">
        {needComment ? 'To reject, write a comment first: the agent reads it as the reason.' : 'Your comment is kept with the decision.'}
      </p>
    </form>
  );
}
