// Invoices as MCP resources (crm://invoices/{id}), read through get_invoice and listed through list_invoices.
import { defineRecordResource, textField } from '../../core/resources.ts';
import { getInvoice, listInvoices } from './tools.ts';

export const invoiceResource = defineRecordResource({
  collection: 'invoices',
  title: 'Invoice',
  description:
    'An invoice as get_invoice answers it: priced lines, totals, payments, amount paid and due, status and dates.',
  get: getInvoice,
  list: listInvoices,
  items: 'invoices',
  recentSort: '-updated_at',
  label: (invoice) => {
    const number = textField(invoice, 'number') ?? 'Draft invoice';
    return `${number}, ${String(invoice.total)} ${textField(invoice, 'currency') ?? ''}`.trim();
  },
});
