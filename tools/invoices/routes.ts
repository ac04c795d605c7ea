// Invoice routes: the collection, one invoice (PUT merges exactly like PATCH), its moves, sending
// and the PDF (a file route: the bytes, not JSON).
import { type Route, route } from '../../core/route.ts';
import type { Tool } from '../../core/tool.ts';
import {
  deleteInvoice,
  finalizeInvoice,
  getInvoice,
  getInvoicePdf,
  listInvoices,
  markInvoiceUncollectible,
  recordInvoicePayment,
  sendInvoice,
  voidInvoice,
} from './tools.ts';

/** The invoice routes, with create and update as built from the invoice-project hooks (index.ts). */
export function invoiceRoutes(createInvoice: Tool, updateInvoice: Tool): Route[] {
  return [
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
}
