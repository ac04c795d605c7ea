// Estimate routes: the collection, one estimate (PUT merges exactly like PATCH), its moves and the
// conversion into an invoice.
import { type Route, route } from '../../core/route.ts';
import { documentRoutes, pdfRoute } from '../documents/routes.ts';
import {
  acceptEstimateTool,
  convertEstimateToInvoice,
  declineEstimateTool,
  estimateTools,
  getEstimatePdf,
  sendEstimate,
} from './tools.ts';

export const estimateRoutes: Route[] = [
  ...documentRoutes('estimate', estimateTools),
  route('POST', '/estimates/:id/send', sendEstimate),
  route('POST', '/estimates/:id/accept', acceptEstimateTool),
  route('POST', '/estimates/:id/decline', declineEstimateTool),
  route('POST', '/estimates/:id/convert-to-invoice', convertEstimateToInvoice, { status: 201 }),
  pdfRoute('/estimates', getEstimatePdf),
];
