/** Daily figures for the dashboard's home page. */
export {
  type ApprovalDay,
  type DailyStats,
  type IncidentDay,
  type ModelCostDay,
  dailyStats,
} from './daily.js';
