/** An incident as callers see it. */
import type { IncidentRow } from '../../db/schema.js';

/** The row without who resolved it (the resolution names them) and its de-duplication key. */
export function incidentView({ resolvedBy, dedupeKey, ...view }: IncidentRow) {
  return view;
}

export type IncidentView = ReturnType<typeof incidentView>;
