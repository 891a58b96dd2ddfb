/** Daily figures for the dashboard's home page. */
export { type DailyStats, dailyStats } from './daily.js';
