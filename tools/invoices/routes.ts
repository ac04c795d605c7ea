// Invoice routes: the collection, one invoice (PUT merges exactly like PATCH), its moves, sending
// and the PDF (a file route: the bytes, not JSON).
import { type Route, route } from '../../core/route.ts';
import type { Tool } from '../../core/tool.ts';
import { documentRoutes, pdfRoute } from '../documents/routes.ts';
import {
  finalizeInvoice,
  getInvoicePdf,
  invoiceTools,
  markInvoiceUncollectible,
  recordInvoicePayment,
  sendInvoice,
  voidInvoice,
} from './tools.ts';

/** The invoice routes, with create and update as built from the invoice-project hooks (index.ts). */
export function invoiceRoutes(createInvoice: Tool, updateInvoice: Tool): Route[] {
  return [
    ...documentRoutes('invoice', invoiceTools(createInvoice, updateInvoice)),
    route('POST', '/invoices/:id/finalize', finalizeInvoice),
    route('POST', '/invoices/:id/payments', recordInvoicePayment, { status: 201 }),
    route('POST', '/invoices/:id/void', voidInvoice),
    route('POST', '/invoices/:id/mark-uncollectible', markInvoiceUncollectible),
    route('POST', '/invoices/:id/send', sendInvoice),
    pdfRoute('/invoices', getInvoicePdf),
  ];
}
