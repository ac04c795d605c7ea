import { defineArea } from '../../core/area.ts';
import { forecastSnapshot } from './jobs.ts';
import { forecastRoutes } from './routes.ts';
import { forecastTools } from './tools.ts';

/** Forecast accuracy: daily pipeline snapshots (jobs.ts) against the value won. */
export const forecastArea = defineArea({
  name: 'forecast',
  tools: forecastTools,
  routes: forecastRoutes,
  tags: {
    forecast:
      'Forecast accuracy: the weighted pipeline snapshotted at a period start against the value won in the period.',
  },
  permissions: ['forecast.view'],
  events: [],
  toolsets: ['sales'],
  jobs: [forecastSnapshot.job],
  schedules: [forecastSnapshot.schedule],
});
