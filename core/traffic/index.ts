export { TrafficBook, type TrafficBookOptions, type TrafficToday } from './traffic-book.js';
export { trafficOptionsSchema, DEFAULT_TRAFFIC_OPTIONS, type TrafficOptions } from './options.js';
export type { TrafficSummary, TrafficPart, TrafficDay, TrafficTotals } from './summary.js';
export { CSV_COLUMNS } from './csv.js';
export { dayOf, daysBefore } from './day.js';
