'use client';
/** Resolve an incident with a comment; for TOOL_OUTCOME_UNKNOWN also whether it happened and its result. */
import { useId, useState } from 'react';
import { useMutation } from 'urql';
import { sentence } from '../lib/errors';
import { ResolveIncident } from '../lib/queries';

export function ResolveForm({ id, outcomeUnknown, onDone }: { id: string; outcomeUnknown: boolean; onDone(): void }) {
  const uid = useId();
  const [happened, setHappened] = useState<'yes' | 'no' | ''>('');
  const [result, setResult] = useState('');
  const [comment, setComment] = useState('');
  const [jsonError, setJsonError] = useState<string | null>(null);
  const [state, resolve] = useMutation(ResolveIncident);
  const submit = async () => {
    let parsed: unknown = null;
    if (outcomeUnknown && result.trim()) {
      try {
        parsed = JSON.parse(result);
      } catch (e) {
        setJsonError(`The result is not valid JSON: ${(e as Error).message}`);
        return;
      }
    }
    setJsonError(null);
    const r = await resolve({
      input: {
        id,
        comment: comment.trim(),
        ...(outcomeUnknown ? { happened: happened === 'yes', result: parsed } : {}),
      },
    });
    if (!r.error) onDone();
  };
  const ready = comment.trim() !== '' && (!outcomeUnknown || happened !== '');
  return (
    <form className="stack" onSubmit={(e) => (e.preventDefault(), submit())}>
      {outcomeUnknown ? (
        <fieldset>
          <legend>Did the call take effect? (check the target system)</legend>
          <p className="muted small">
            A call sent moments before its worker stopped can still reach the target system: if it is not there yet,
            look again in a few seconds before answering no.
          </p>
          <label>
            <input type="radio" name={`${uid}-h`} checked={happened === 'yes'} onChange={() => setHappened('yes')} /> Yes, it happened
          </label>
          <label>
            <input type="radio" name={`${uid}-h`} checked={happened === 'no'} onChange={() => setHappened('no')} /> No, it did not
          </label>
        </fieldset>
      ) : null}
      {outcomeUnknown ? (
        <>
          <label htmlFor={`${uid}-r`}>What the call returned (JSON, given to the agent)</label>
          <textarea id={`${uid}-r`} rows={3} value={result} onChange={(e) => setResult(e.target.value)} className="mono" />
        </>
      ) : null}
      <label htmlFor={`${uid}-c`}>Comment (required)</label>
      <textarea id={`${uid}-c`} rows={2} value={comment} onChange={(e) => setComment(e.target.value)} />
      <div className="actions">
        <button type="submit" className="primary" disabled={!ready || state.fetching}>
          Resolve
        </button>
      </div>
      {jsonError ? <p className="error-box">{jsonError}</p> : null}
      {state.error ? (
        <p className="error-box" role="alert">
          {sentence(state.error)}
        </p>
      ) : null}
    </form>
  );
}
