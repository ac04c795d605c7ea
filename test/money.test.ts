// Locks in exact money: per-line rounding half away from zero in the currency's minor digits,
// totals as sums of rounded lines, equal to an independent big-integer computation for random
// lines and currencies, and no binary-float result anywhere (0.1 + 0.2 is 0.3).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { lineItemProblems, lineItemsInput, priceLines } from '../core/line-items.ts';
import {
  CURRENCY_CODES,
  decimalOf,
  divideRounded,
  documentTotals,
  formatMinor,
  fromMinor,
  MAX_MINOR,
  minorDigits,
  parseMinor,
  toMinor,
} from '../core/money.ts';

/** The number written `units` with `scale` decimals, built from text so no float arithmetic makes it. */
function numberOf(units: bigint, scale: number): number {
  const text = units.toString().padStart(scale + 1, '0');
  return Number(scale === 0 ? text : `${text.slice(0, -scale)}.${text.slice(-scale)}`);
}

/** Reference rounding, written independently: quotient and remainder, up when 2r >= d (non-negative n). */
function roundHalfUp(n: bigint, d: bigint): bigint {
  const q = n / d;
  const r = n % d;
  return 2n * r >= d ? q + 1n : q;
}

const line = fc.record({
  quantityUnits: fc.bigInt({ min: 1n, max: 10n ** 8n }),
  quantityScale: fc.integer({ min: 0, max: 4 }),
  priceMinor: fc.bigInt({ min: 0n, max: 10n ** 9n }),
  discountHundredths: fc.bigInt({ min: 0n, max: 10_000n }),
  taxThousandths: fc.bigInt({ min: 0n, max: 100_000n }),
});

describe('money', () => {
  it('knows the minor digits of 0-, 2-, 3- and 4-digit currencies', () => {
    expect(minorDigits('JPY')).toBe(0);
    expect(minorDigits('USD')).toBe(2);
    expect(minorDigits('EUR')).toBe(2);
    expect(minorDigits('KWD')).toBe(3);
    expect(minorDigits('CLF')).toBe(4);
    expect(() => minorDigits('XYZ')).toThrow(RangeError);
    expect(CURRENCY_CODES.length).toBeGreaterThan(150);
  });

  it('reads numbers as the exact decimals they print as, and refuses more digits than the currency has', () => {
    expect(decimalOf(0.1)).toEqual({ units: 1n, scale: 1 });
    expect(decimalOf(1e21)).toBeNull();
    expect(decimalOf(Number.NaN)).toBeNull();
    expect(toMinor(12.5, 'USD')).toBe(1250n);
    expect(toMinor(1000, 'JPY')).toBe(1000n);
    expect(toMinor(1.234, 'KWD')).toBe(1234n);
    expect(() => toMinor(1.234, 'USD')).toThrow(/at most 2 decimals/);
    expect(() => toMinor(0.5, 'JPY')).toThrow(/at most 0 decimals/);
    expect(formatMinor(1250n, 'USD')).toBe('12.50');
    expect(formatMinor(-5n, 'USD')).toBe('-0.05');
    expect(formatMinor(7n, 'KWD')).toBe('0.007');
    expect(formatMinor(7n, 'JPY')).toBe('7');
    expect(parseMinor('12.50', 'USD')).toBe(1250n);
    expect(parseMinor('12.5000', 'USD')).toBe(1250n);
    expect(() => parseMinor('12.505', 'USD')).toThrow(RangeError);
  });

  it('rounds half away from zero', () => {
    expect(divideRounded(5n, 2n)).toBe(3n);
    expect(divideRounded(-5n, 2n)).toBe(-3n);
    expect(divideRounded(4n, 3n)).toBe(1n);
    expect(divideRounded(-4n, 3n)).toBe(-1n);
    // 0.025 of tax on a 0.05 line at 50%: rounds up to 0.03, not to even (0.02).
    const totals = documentTotals([{ quantity: 1, unit_price: 0.05, tax_percent: 50 }], 'USD');
    expect(totals.lines[0]).toEqual({ amount: 5n, tax: 3n });
  });

  it('sums 0.1 and 0.2 to exactly 0.3', () => {
    const priced = priceLines(
      [
        { description: 'a', quantity: 1, unit_price: 0.1 },
        { description: 'b', quantity: 1, unit_price: 0.2 },
      ],
      'USD',
    );
    expect(priced.subtotal).toBe(0.3);
    expect(priced.total).toBe(0.3);
    expect(0.1 + 0.2).not.toBe(0.3);
  });

  it('rounds each line before summing: three thirds of a cent-priced line do not add up to the whole', () => {
    // 3 lines of 0.333 × 1 in USD: each line rounds to 0.33, the total is 0.99 (not round(0.999) = 1.00).
    const lines = [1, 2, 3].map(() => ({ quantity: 0.333, unit_price: 1 }));
    const totals = documentTotals(lines, 'USD');
    expect(formatMinor(totals.subtotal, 'USD')).toBe('0.99');
  });

  it('prices random lines in random currencies exactly as an independent big-integer computation', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...CURRENCY_CODES),
        fc.array(line, { minLength: 1, maxLength: 20 }),
        (currency, raw) => {
          const digits = minorDigits(currency);
          const lines = raw.map((l) => ({
            quantity: numberOf(l.quantityUnits, l.quantityScale),
            unit_price: numberOf(l.priceMinor, digits),
            discount_percent: numberOf(l.discountHundredths, 2),
            tax_percent: numberOf(l.taxThousandths, 3),
          }));
          let subtotal = 0n;
          let taxTotal = 0n;
          const expectedLines = raw.map((l) => {
            // amount (minor) = q × p × (1 − d/100): q = qu/10^qs, p = pm/10^digits (already minor × 10^-digits), d = dh/100.
            const numerator = l.quantityUnits * l.priceMinor * (10_000n - l.discountHundredths);
            const amount = roundHalfUp(numerator, 10n ** BigInt(l.quantityScale) * 10_000n);
            const tax = roundHalfUp(amount * l.taxThousandths, 100_000n);
            subtotal += amount;
            taxTotal += tax;
            return { amount, tax };
          });
          const totals = documentTotals(lines, currency);
          expect(totals.lines).toEqual(expectedLines);
          expect(totals.subtotal).toBe(subtotal);
          expect(totals.taxTotal).toBe(taxTotal);
          expect(totals.total).toBe(subtotal + taxTotal);
          // The JSON figures are the exact decimals of those minor units, never a float artefact.
          if (totals.total <= MAX_MINOR) {
            const priced = priceLines(
              lines.map((l) => ({ description: 'x', ...l })),
              currency,
            );
            expect(String(priced.total)).toBe(String(Number(formatMinor(subtotal + taxTotal, currency))));
            expect(decimalOf(priced.total)?.scale ?? 99).toBeLessThanOrEqual(digits);
            expect(fromMinor(totals.subtotal, currency)).toBe(priced.subtotal);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('keeps sums of many tenths exact', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 500 }), (n) => {
        const lines = Array.from({ length: n }, () => ({
          description: 'tenth',
          quantity: 1,
          unit_price: 0.1,
        }));
        expect(priceLines(lines, 'EUR').total).toBe(Number(formatMinor(BigInt(n) * 10n, 'EUR')));
      }),
    );
  });
});

describe('line items', () => {
  it('refuses a unit price with more decimals than the currency, naming the line', () => {
    expect(lineItemProblems([{ quantity: 1, unit_price: 1.5 }], 'JPY')).toEqual([
      {
        field: 'line_items.0.unit_price',
        message: 'must have at most 0 decimals in JPY',
        code: 'too_many_decimals',
      },
    ]);
    expect(lineItemProblems([{ quantity: 1, unit_price: 1.005 }], 'KWD')).toEqual([]);
  });

  it('refuses totals past what a JSON number keeps exactly', () => {
    const lines = [{ quantity: 1000, unit_price: 1_000_000_000_000 }];
    expect(lineItemProblems(lines, 'USD')[0]?.code).toBe('too_big');
    expect(lineItemProblems([{ quantity: 1, unit_price: 1_000_000_000 }], 'USD')).toEqual([]);
  });

  it('validates the fields of a line', () => {
    const bad = lineItemsInput.safeParse([
      { description: '', quantity: 0, unit_price: -1, discount_percent: 101, tax_percent: 1.00001 },
    ]);
    expect(bad.success).toBe(false);
    const fields = bad.error?.issues.map((i) => i.path.join('.')).sort();
    expect(fields).toEqual([
      '0.description',
      '0.discount_percent',
      '0.quantity',
      '0.tax_percent',
      '0.unit_price',
    ]);
    expect(lineItemsInput.safeParse([]).success).toBe(false);
  });
});
