/** Incidents: opened by the engine, listed, resolved by a person. */
export { getIncident, type IncidentView, listIncidents, openIncident, resolveIncident } from './incidents.js';
export { openOrBumpIncident } from './repeat.js';
