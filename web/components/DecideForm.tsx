'use client';
/** Approve / Reject bound to the digest the person saw. Reject stays disabled until a comment is typed. */
import { useRef, useState } from 'react';
import { useMutation } from 'urql';
import { sentence } from '../lib/errors';
import { useShortcut } from '../lib/keys';
import { DecideMutation } from '../lib/queries';

export function DecideForm({ approvalId, digest, onDone }: { approvalId: string; digest: string; onDone(): void }) {
  const [comment, setComment] = useState('');
  const [result, decide] = useMutation(DecideMutation);
  const [done, setDone] = useState<string | null>(null);
  const send = async (decision: 'APPROVE' | 'REJECT') => {
    setDone(null);
    const r = await decide({
      input: { approvalId, decision, digest, comment: comment.trim() || null },
    });
    if (!r.error) {
      setDone(decision === 'APPROVE' ? 'Approved. The agent will run exactly this call.' : 'Rejected. The agent will read your comment.');
      onDone();
    }
  };
  const needComment = comment.trim() === '';
  const box = useRef<HTMLTextAreaElement>(null);
  // Shift+A approves; Shift+R rejects, or first puts the cursor in the comment a rejection needs
  useShortcut('a', () => !result.fetching && send('APPROVE'), { shift: true });
  useShortcut('r', () => (needComment ? box.current?.focus() : !result.fetching && send('REJECT')), { shift: true });
  return (
    <form className="decide stack" onSubmit={(e) => e.preventDefault()} aria-label="Decision">
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
          disabled={result.fetching}
          onClick={() => send('APPROVE')}
        >
          Approve
        </button>
        <button
          type="button"
          className="danger"
          aria-keyshortcuts="Shift+R"
          disabled={result.fetching || needComment}
          onClick={() => send('REJECT')}
        >
          Reject
        </button>
      </div>
      <p className="muted small">
        Keys: <kbd>Shift</kbd>+<kbd>A</kbd> approve · <kbd>Shift</kbd>+<kbd>R</kbd> reject (comment first)
      </p>
      <p id="reject-hint" className="muted small">
        {needComment ? 'To reject, write a comment first: the agent reads it as the reason.' : 'Your comment is kept with the decision.'}
      </p>
      {result.error ? (
        <p className="error-box" role="alert" data-testid="decide-error">
          {sentence(result.error)}
        </p>
      ) : null}
      {done ? (
        <p className="ok-box" role="status">
          {done}
        </p>
      ) : null}
    </form>
  );
}
