/** The gauges /metrics reads from the database. */
export { DECISION_BUCKETS, type DbGauges, collectDbGauges } from './gauges.js';
