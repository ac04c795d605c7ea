// Forecast accuracy: the tool comparing the forecast snapshotted at a period's start with the value
// won in the period. The snapshots and the figures are store.ts.
import { z } from 'zod';
import { defineTool } from '../../core/tool.ts';
import { accuracySchema, forecastAccuracy, PERIOD_PATTERN, parsePeriod } from './store.ts';

export const getForecastAccuracy = defineTool({
  name: 'get_forecast_accuracy',
  title: 'Get forecast accuracy',
  description:
    'Compares the sales forecast with what was won for a period: `period` is a year (2026), a quarter (2026-Q1) or a month ' +
    '(2026-03). The forecast is the weighted pipeline (value x confidence / 100) of active opportunities expected to close in ' +
    'the period, as snapshotted daily and taken at the period start; `commit` counts those at confidence >= 90; `actual` is ' +
    'the value won with a close date in the period. Per currency: accuracy = 1 - |forecast - actual| / actual and bias = ' +
    '(forecast - actual) / actual (null when nothing was won); quarters and years also give each month and the MAPE across ' +
    'months. `snapshot_on` is null (and forecast figures null) when no snapshot existed by the period start.',
  input: z.strictObject({
    period: z
      .string()
      .regex(PERIOD_PATTERN, 'period must be YYYY, YYYY-Qn (n 1-4) or YYYY-MM')
      .describe('The period: YYYY, YYYY-Qn (n 1-4) or YYYY-MM'),
  }),
  output: z.object({ accuracy: accuracySchema.describe("The period's forecast against its actuals") }),
  access: { kind: 'read', resource: 'opportunities', permission: 'forecast.view', feature: 'forecasting' },
  toolset: 'sales',
  async handler(input, { db, auth, now }) {
    return { accuracy: await forecastAccuracy(db, auth.orgId, parsePeriod(input.period), now) };
  },
});

export const forecastTools = [getForecastAccuracy];
