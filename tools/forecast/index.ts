import { defineArea } from '../../core/area.ts';
import { forecastCatalogue } from './catalogue.ts';
import { forecastSnapshot } from './jobs.ts';
import { forecastRoutes } from './routes.ts';
import { forecastTools } from './tools.ts';

/** Forecast accuracy: daily pipeline snapshots (jobs.ts) against the value won. */
export const forecastArea = defineArea({
  name: 'forecast',
  uses: ['opportunities'],
  tools: forecastTools,
  routes: forecastRoutes,
  tags: {
    forecast:
      'Forecast accuracy: the weighted pipeline snapshotted at a period start against the value won in the period.',
  },
  brings: forecastCatalogue,
  permissions: ['forecast.view'],
  events: [],
  toolsets: ['sales'],
  jobs: [forecastSnapshot.job],
  schedules: [forecastSnapshot.schedule],
});
