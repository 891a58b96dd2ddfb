/** The gauges /metrics reads from the database. */
export { DECISION_BUCKETS, collectDbGauges } from './gauges.js';
