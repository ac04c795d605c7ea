// Invoice routes: the collection, one invoice (PUT merges exactly like PATCH), its moves, sending
// and the PDF (a file route: the bytes, not JSON).
import { type Route, route } from '../../core/route.ts';
import {
  createInvoice,
  deleteInvoice,
  finalizeInvoice,
  getInvoice,
  getInvoicePdf,
  listInvoices,
  markInvoiceUncollectible,
  recordInvoicePayment,
  sendInvoice,
  updateInvoice,
  voidInvoice,
} from './tools.ts';

export const invoiceRoutes: Route[] = [
  route('GET', '/invoices', listInvoices),
  route('POST', '/invoices', createInvoice),
  route('GET', '/invoices/:id', getInvoice),
  route('PATCH', '/invoices/:id', updateInvoice),
  route('PUT', '/invoices/:id', updateInvoice),
  route('DELETE', '/invoices/:id', deleteInvoice),
  route('POST', '/invoices/:id/finalize', finalizeInvoice),
  route('POST', '/invoices/:id/payments', recordInvoicePayment, { status: 201 }),
  route('POST', '/invoices/:id/void', voidInvoice),
  route('POST', '/invoices/:id/mark-uncollectible', markInvoiceUncollectible),
  route('POST', '/invoices/:id/send', sendInvoice),
  route('GET', '/invoices/:id/pdf', getInvoicePdf, { file: { mediaType: 'application/pdf' } }),
];
