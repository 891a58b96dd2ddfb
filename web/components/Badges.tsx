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
