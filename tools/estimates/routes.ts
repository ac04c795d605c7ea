// Estimate routes: the collection, one estimate (PUT merges exactly like PATCH), its moves and the
// conversion into an invoice.
import { type Route, route } from '../../core/route.ts';
import {
  acceptEstimateTool,
  convertEstimateToInvoice,
  createEstimate,
  declineEstimateTool,
  deleteEstimate,
  getEstimate,
  getEstimatePdf,
  listEstimates,
  sendEstimate,
  updateEstimate,
} from './tools.ts';

export const estimateRoutes: Route[] = [
  route('GET', '/estimates', listEstimates),
  route('POST', '/estimates', createEstimate),
  route('GET', '/estimates/:id', getEstimate),
  route('PATCH', '/estimates/:id', updateEstimate),
  route('PUT', '/estimates/:id', updateEstimate),
  route('DELETE', '/estimates/:id', deleteEstimate),
  route('POST', '/estimates/:id/send', sendEstimate),
  route('POST', '/estimates/:id/accept', acceptEstimateTool),
  route('POST', '/estimates/:id/decline', declineEstimateTool),
  route('POST', '/estimates/:id/convert-to-invoice', convertEstimateToInvoice, { status: 201 }),
  route('GET', '/estimates/:id/pdf', getEstimatePdf, { file: { mediaType: 'application/pdf' } }),
];
