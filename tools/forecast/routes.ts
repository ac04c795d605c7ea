// Forecast route: the accuracy of a period's forecast.
import { type Route, route } from '../../core/route.ts';
import { getForecastAccuracy } from './tools.ts';

export const forecastRoutes: Route[] = [route('GET', '/forecast/accuracy', getForecastAccuracy)];
