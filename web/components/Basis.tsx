/**
 * Why the agent asks (SPEC §11 basis): the node's inputs, the model's own text next to the call, and the
 * tool calls it made before — all from the journal, labelled as what they are. The model's text is its
 * words, not the engine's.
 */
type Call = { sequence: number; toolRef: string; arguments: unknown; response: unknown; error: string | null; state: string };

export function Basis({
  basis,
}: {
  basis: { inputs: unknown; modelText: string | null; redactedPaths: string[]; priorCalls: readonly Call[] };
}) {
  const inputs = Object.entries((basis.inputs ?? {}) as Record<string, unknown>);
  return (
    <div className="stack" data-testid="basis">
      <h3>What the agent was given</h3>
      {inputs.length === 0 ? (
        <p className="muted">No inputs.</p>
      ) : (
        <dl className="facts">
          {inputs.map(([k, v]) => (
            <div key={k} className="contents">
              <dt>{k}</dt>
              <dd data-testid={`input-${k}`}>{typeof v === 'string' ? v : JSON.stringify(v)}</dd>
            </div>
          ))}
        </dl>
      )}
      <h3>What the model said with the call</h3>
      {basis.modelText ? (
        <blockquote data-testid="model-text">
          <span className="muted small">The model's words: </span>
          {basis.modelText}
        </blockquote>
      ) : (
        <p className="muted" data-testid="model-text">The model gave no text.</p>
      )}
      <h3>What it looked up before</h3>
      {basis.priorCalls.length === 0 ? (
        <p className="muted">No earlier tool calls in this attempt.</p>
      ) : (
        <ol className="prior-calls">
          {basis.priorCalls.map((c) => (
            <li key={c.sequence}>
              <details>
                <summary>
                  step {c.sequence}: <code>{c.toolRef}</code> — {c.state.toLowerCase()}
                </summary>
                <pre>{JSON.stringify({ arguments: c.arguments, response: c.response ?? c.error }, null, 2)}</pre>
              </details>
            </li>
          ))}
        </ol>
      )}
      {basis.redactedPaths.length > 0 ? (
        <p className="muted small">Withheld by the evidence policy: {basis.redactedPaths.join(', ')}</p>
      ) : null}
    </div>
  );
}
