/** Incidents: opened by the engine, listed, resolved by a person. */
export { getIncident, listIncidents, openIncident, resolveIncident } from './incidents.js';
export { openOrBumpIncident } from './repeat.js';
export type { IncidentView } from './views.js';
