/** State badges: colour plus words, never colour alone. */
export function StateBadge({ state }: { state: string }) {
  return <span className={`badge state-${state.toLowerCase()}`}>{state.replace(/_/g, ' ').toLowerCase()}</span>;
}

export function EscalatedBadge() {
  return (
    <span className="badge escalated" title="No decision within the SLA">
      escalated
    </span>
  );
}

/** The policy answered a call, not a person: auto-approved, refused by a rule, invalid, not proposed. */
export function PolicyBadge({ mark }: { mark: { kind: string; label: string } }) {
  return (
    <span className={`badge policy-${mark.kind}`} data-testid="policy-badge">
      {mark.label}
    </span>
  );
}
