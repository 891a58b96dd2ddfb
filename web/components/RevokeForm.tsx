'use client';
/**
 * Revoke: withdraw an approval before its call starts (a person who decided it, or an admin). The
 * reason is required: the agent reads it as the rejection. Once the call started the engine refuses
 * (ALREADY_EXECUTING) and the error says so.
 */
import { useRef, useState } from 'react';
import { useMutation } from 'urql';
import { sentence } from '../lib/errors';
import { useShortcut } from '../lib/keys';
import { RevokeMutation } from '../lib/queries';

export function RevokeForm({ approvalId, onDone }: { approvalId: string; onDone(): void }) {
  const [comment, setComment] = useState('');
  const [result, revoke] = useMutation(RevokeMutation);
  const [done, setDone] = useState(false);
  const send = async () => {
    const r = await revoke({ input: { approvalId, comment: comment.trim() } });
    if (!r.error) {
      setDone(true);
      onDone();
    }
  };
  const box = useRef<HTMLTextAreaElement>(null);
  // Shift+V: to the reason first; with a reason written, revoke
  useShortcut('v', () => (comment.trim() === '' ? box.current?.focus() : !result.fetching && send()), { shift: true });
  return (
    <form className="decide stack" onSubmit={(e) => e.preventDefault()} aria-label="Revoke">
      <label htmlFor="revoke-comment">Revoke before the call runs</label>
      <textarea
        id="revoke-comment"
        ref={box}
        rows={2}
        value={comment}
        onChange={(e) => setComment(e.target.value)}
        placeholder="Why — the agent reads this as the rejection"
      />
      <div className="actions">
        <button
          type="button"
          className="danger"
          aria-keyshortcuts="Shift+V"
          disabled={result.fetching || comment.trim() === ''}
          onClick={send}
        >
          Revoke
        </button>
      </div>
      <p className="muted small">
        Key: <kbd>Shift</kbd>+<kbd>V</kbd> revoke (reason first)
      </p>
      {result.error ? (
        <p className="error-box" role="alert" data-testid="revoke-error">
          {sentence(result.error)}
        </p>
      ) : null}
      {done ? (
        <p className="ok-box" role="status">
          Revoked. The call will not run; the agent will read your reason.
        </p>
      ) : null}
    </form>
  );
}
