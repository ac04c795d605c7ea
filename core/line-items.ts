// Line items of priced documents (invoices, estimates, proposals): the input fields of docs/contracts.md
// "Money and delivery", the checks that need the document's currency (a unit price with more decimals
// than the currency has, figures past what is kept exactly), and the priced lines and totals
// responses carry. One module so the three documents accept and price lines identically.
import { z } from 'zod';
import type { ErrorDetail } from './errors.ts';
import {
  CURRENCY_CODES,
  decimalPlaces,
  documentTotals,
  fromMinor,
  isCurrency,
  type LinePrice,
  minorDigits,
  totalsProblem,
} from './money.ts';
import { NO_NUL, nulMessage } from './text-rules.ts';

const MAX_LINE_ITEMS = 500;
const MAX_QUANTITY = 1_000_000_000;
const MAX_UNIT_PRICE = 1_000_000_000_000;

const atMostDecimals = (places: number) => (value: number) => decimalPlaces(value) <= places;

export const currencyField = z
  .string()
  .refine(isCurrency, 'must be an active ISO 4217 currency code in uppercase, e.g. USD, EUR, JPY')
  .meta({ enum: [...CURRENCY_CODES] })
  .describe('ISO 4217 currency code (USD, EUR, JPY, KWD...): amounts carry at most its minor digits');

const percent = (what: string) =>
  z
    .number()
    .min(0)
    .max(100)
    .refine(atMostDecimals(4), 'must have at most 4 decimals')
    .describe(`${what}, percent (up to 4 decimals)`);

export const lineItemInput = z.strictObject({
  description: z.string().trim().min(1).max(1000).refine(NO_NUL, nulMessage).describe('What is sold'),
  quantity: z
    .number()
    .gt(0)
    .max(MAX_QUANTITY)
    .refine(atMostDecimals(4), 'must have at most 4 decimals')
    .describe('How many, up to 4 decimals'),
  unit_price: z
    .number()
    .min(0)
    .max(MAX_UNIT_PRICE)
    .describe("Unit price in major units (12.5 = 12.50), at most the currency's decimals"),
  discount_percent: percent('Discount off this line before tax').optional(),
  tax_percent: percent('Tax on this line after discount').optional(),
});
export type LineItemInput = z.output<typeof lineItemInput>;

export const lineItemsInput = z
  .array(lineItemInput)
  .min(1)
  .max(MAX_LINE_ITEMS)
  .describe(`The lines, 1-${MAX_LINE_ITEMS}; each line's discount and tax are rounded per line`);

/**
 * Field errors of lines that only the currency can tell: a unit price with more decimals than the
 * currency has (`line_items.2.unit_price`), or totals past what is kept exactly.
 */
export function lineItemProblems(
  lines: readonly LinePrice[],
  currency: string,
  field = 'line_items',
): ErrorDetail[] {
  const digits = minorDigits(currency);
  const details: ErrorDetail[] = [];
  lines.forEach((line, index) => {
    if (decimalPlaces(line.unit_price) > digits) {
      details.push({
        field: `${field}.${index}.unit_price`,
        message: `must have at most ${digits} decimals in ${currency}`,
        code: 'too_many_decimals',
      });
    }
  });
  if (details.length > 0) return details;
  const problem = totalsProblem(lines, currency);
  return problem ? [{ field, message: problem, code: 'too_big' }] : [];
}

export const pricedLineSchema = lineItemInput.extend({
  discount_percent: z.number().describe('Discount off this line before tax, percent (0 when none)'),
  tax_percent: z.number().describe('Tax on this line after discount, percent (0 when none)'),
  amount: z
    .number()
    .describe('quantity × unit_price less the discount, rounded half away from zero to the currency'),
  tax_amount: z.number().describe('amount × tax_percent, rounded half away from zero to the currency'),
});
export type PricedLine = z.output<typeof pricedLineSchema>;

export const documentTotalsShape = {
  subtotal: z.number().describe('Sum of the lines’ amounts'),
  tax_total: z.number().describe('Sum of the lines’ tax amounts'),
  total: z.number().describe('subtotal + tax_total'),
};

/** The lines with their amounts and the document's totals, as JSON numbers of the major unit. */
export function priceLines(
  lines: readonly LineItemInput[],
  currency: string,
): { line_items: PricedLine[]; subtotal: number; tax_total: number; total: number } {
  const totals = documentTotals(lines, currency);
  return {
    line_items: lines.map((line, index) => {
      const priced = totals.lines[index];
      if (!priced) throw new Error('documentTotals returned fewer lines than it was given');
      return {
        ...line,
        discount_percent: line.discount_percent ?? 0,
        tax_percent: line.tax_percent ?? 0,
        amount: fromMinor(priced.amount, currency),
        tax_amount: fromMinor(priced.tax, currency),
      };
    }),
    subtotal: fromMinor(totals.subtotal, currency),
    tax_total: fromMinor(totals.taxTotal, currency),
    total: fromMinor(totals.total, currency),
  };
}
