// Survey routes: the collection, one survey, its status moves, its responses and its summary. PUT
// merges exactly like PATCH, as on every record resource. The public form is public.ts.
import { type Route, route } from '../../core/route.ts';
import {
  activateSurveyTool,
  closeSurveyTool,
  createSurvey,
  deleteSurvey,
  getSurvey,
  getSurveySummary,
  listSurveyResponses,
  listSurveys,
  updateSurvey,
} from './tools.ts';

export const surveyRoutes: Route[] = [
  route('GET', '/surveys', listSurveys),
  route('POST', '/surveys', createSurvey),
  route('GET', '/surveys/:id', getSurvey),
  route('PATCH', '/surveys/:id', updateSurvey),
  route('PUT', '/surveys/:id', updateSurvey),
  route('DELETE', '/surveys/:id', deleteSurvey),
  route('POST', '/surveys/:id/activate', activateSurveyTool),
  route('POST', '/surveys/:id/close', closeSurveyTool),
  route('GET', '/surveys/:id/responses', listSurveyResponses),
  route('GET', '/surveys/:id/summary', getSurveySummary),
];
