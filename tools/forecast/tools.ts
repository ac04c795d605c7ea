// Forecast accuracy: the tool comparing the forecast snapshotted at a period's start with the value
// won in the period. The snapshots and the figures are store.ts.
import { z } from 'zod';
import { defineTool } from '../../core/tool.ts';
import { accuracySchema, forecastAccuracy, PERIOD_PATTERN, parsePeriod } from './store.ts';

export const getForecastAccuracy = defineTool({
  name: 'get_forecast_accuracy',
  title: 'Get forecast accuracy',
  description:
    'Compares the sales forecast (the weighted pipeline as snapshotted at the period start) with what was won in a period: a year (2026), quarter (2026-Q1) or month (2026-03). Per currency: forecast, commit (confidence >= 90), actual, accuracy and bias; quarters and years add each month and the MAPE. `snapshot_on` null: no snapshot by the period start.',
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
