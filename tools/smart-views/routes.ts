// Smart view routes: the saved views and their results.

import { type Route, route } from '../../core/route.ts';
import {
  createSmartView,
  deleteSmartView,
  getSmartView,
  listSmartViews,
  runSmartView,
  updateSmartView,
} from './tools.ts';

export const smartViewRoutes: Route[] = [
  route('POST', '/smart-views', createSmartView),
  route('GET', '/smart-views', listSmartViews),
  route('GET', '/smart-views/:id', getSmartView),
  route('PUT', '/smart-views/:id', updateSmartView),
  route('PATCH', '/smart-views/:id', updateSmartView),
  route('DELETE', '/smart-views/:id', deleteSmartView),
  route('GET', '/smart-views/:id/results', runSmartView),
];
