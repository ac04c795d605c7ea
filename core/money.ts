// Money: amounts in the currency's major unit (12.5 = 12.50 USD) with at most the currency's minor
// digits (ISO 4217), computed exactly in integer minor units (bigint), never in binary floats.
// Every document that prices lines (invoices, estimates, proposals, projects' invoicing) goes
// through lineAmounts/documentTotals, so a line's discount and tax are rounded the same way
// everywhere: per line, half away from zero, and totals are sums of the rounded lines.
//
// A JSON number reaches us as a double; its shortest decimal form (what String() prints, and what a
// client typed) is read as an exact decimal, so 0.1 is one tenth and 0.1 + 0.2 is 0.3.

/**
 * ISO 4217 currencies whose minor unit is not 2 digits. Every other active code in CURRENCY_CODES
 * has 2. (Funds codes and precious metals without a minor unit are not accepted.)
 */
const MINOR_DIGITS_EXCEPTIONS: Readonly<Record<string, number>> = {
  BIF: 0,
  CLP: 0,
  DJF: 0,
  GNF: 0,
  ISK: 0,
  JPY: 0,
  KMF: 0,
  KRW: 0,
  PYG: 0,
  RWF: 0,
  UGX: 0,
  UYI: 0,
  VND: 0,
  VUV: 0,
  XAF: 0,
  XOF: 0,
  XPF: 0,
  BHD: 3,
  IQD: 3,
  JOD: 3,
  KWD: 3,
  LYD: 3,
  OMR: 3,
  TND: 3,
  CLF: 4,
  UYW: 4,
};

/** Active ISO 4217 currency codes (list one, 2024 amendments) that have a minor unit. */
export const CURRENCY_CODES: readonly string[] = (
  'AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BOV BRL BSD BTN BWP ' +
  'BYN BZD CAD CDF CHE CHF CHW CLF CLP CNY COP COU CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR ' +
  'FJD FKP GBP GEL GHS GIP GMD GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES ' +
  'KGS KHR KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR ' +
  'MWK MXN MXV MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF ' +
  'SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SVC SYP SZL THB TJS TMT TND TOP TRY TTD TWD TZS ' +
  'UAH UGX USD USN UYI UYU UYW UZS VED VES VND VUV WST XAF XCD XCG XOF XPF YER ZAR ZMW ZWG'
).split(' ');

const KNOWN: ReadonlySet<string> = new Set(CURRENCY_CODES);

export function isCurrency(code: string): boolean {
  return KNOWN.has(code);
}

/** The currency's minor digits (2 for USD, 0 for JPY, 3 for KWD); throws for a code we do not know. */
export function minorDigits(currency: string): number {
  if (!KNOWN.has(currency)) throw new RangeError(`Unknown currency ${currency}`);
  return MINOR_DIGITS_EXCEPTIONS[currency] ?? 2;
}

/**
 * The largest amount in minor units any figure may reach: 15 significant digits, so every amount
 * survives the trip through a JSON number (a double holds any 15-digit decimal exactly).
 */
export const MAX_MINOR = 10n ** 15n - 1n;

/** An exact decimal: `units / 10^scale`. */
export interface Decimal {
  units: bigint;
  scale: number;
}

const PLAIN_DECIMAL = /^(-?)(\d+)(?:\.(\d+))?$/;

/**
 * The exact decimal a number stands for, from its shortest decimal form; null for NaN, infinities,
 * and numbers whose shortest form needs an exponent (1e21, 1e-7), which no amount we accept has.
 */
export function decimalOf(value: number): Decimal | null {
  if (!Number.isFinite(value)) return null;
  const match = PLAIN_DECIMAL.exec(String(value));
  if (!match) return null;
  const [, sign = '', whole = '0', fraction = ''] = match;
  const units = BigInt(`${whole}${fraction}`);
  return { units: sign === '-' ? -units : units, scale: fraction.length };
}

/** How many digits a number has after the decimal point (Infinity when it is not a plain decimal). */
export function decimalPlaces(value: number): number {
  return decimalOf(value)?.scale ?? Number.POSITIVE_INFINITY;
}

/** `numerator / denominator` rounded half away from zero (denominator > 0). */
export function divideRounded(numerator: bigint, denominator: bigint): bigint {
  if (denominator <= 0n) throw new RangeError('denominator must be positive');
  const negative = numerator < 0n;
  const magnitude = negative ? -numerator : numerator;
  const quotient = (magnitude * 2n + denominator) / (denominator * 2n);
  return negative ? -quotient : quotient;
}

const pow10 = (n: number): bigint => 10n ** BigInt(n);

/** An amount in the currency's major unit as minor units; throws when it has more digits than the currency. */
export function toMinor(amount: number, currency: string): bigint {
  const digits = minorDigits(currency);
  const decimal = decimalOf(amount);
  if (!decimal || decimal.scale > digits) {
    throw new RangeError(`${amount} is not an amount of ${currency} (at most ${digits} decimals)`);
  }
  return decimal.units * pow10(digits - decimal.scale);
}

/** Minor units as the decimal text of the major unit, with every minor digit: 1250n USD -> "12.50". */
export function formatMinor(minor: bigint, currency: string): string {
  const digits = minorDigits(currency);
  const negative = minor < 0n;
  const text = (negative ? -minor : minor).toString().padStart(digits + 1, '0');
  const whole = digits === 0 ? text : text.slice(0, -digits);
  const fraction = digits === 0 ? '' : `.${text.slice(-digits)}`;
  return `${negative ? '-' : ''}${whole}${fraction}`;
}

/** Minor units as a JSON number of the major unit (exact while |minor| <= MAX_MINOR). */
export function fromMinor(minor: bigint, currency: string): number {
  return Number(formatMinor(minor, currency));
}

/** Minor units from the decimal text a `numeric` column returns ("12.50"); throws on more digits than the currency has. */
export function parseMinor(text: string, currency: string): bigint {
  const match = PLAIN_DECIMAL.exec(text.trim());
  const digits = minorDigits(currency);
  if (!match) throw new RangeError(`${text} is not a decimal amount`);
  const [, sign = '', whole = '0', rawFraction = ''] = match;
  const fraction = rawFraction.replace(/0+$/, '');
  if (fraction.length > digits) throw new RangeError(`${text} has more than ${digits} decimals`);
  const units = BigInt(`${whole}${fraction.padEnd(digits, '0')}`);
  return sign === '-' ? -units : units;
}

/** One priced line as a caller sends it; percents are 0-100. */
export interface LinePrice {
  quantity: number;
  unit_price: number;
  discount_percent?: number | undefined;
  tax_percent?: number | undefined;
}

/** A line's figures in minor units: `amount` after discount and before tax, and its tax. */
export interface LineAmounts {
  amount: bigint;
  tax: bigint;
}

function exact(value: number, what: string): Decimal {
  const decimal = decimalOf(value);
  if (!decimal) throw new RangeError(`${what} ${value} is not a plain decimal number`);
  return decimal;
}

/**
 * amount = round(quantity × unit_price × (100 − discount) / 100), tax = round(amount × tax / 100),
 * each rounded half away from zero to the currency's minor unit: the tax is computed on the
 * rounded amount, the figure the document shows.
 */
function lineAmounts(line: LinePrice, currency: string): LineAmounts {
  const digits = minorDigits(currency);
  const quantity = exact(line.quantity, 'quantity');
  const price = exact(line.unit_price, 'unit_price');
  const discount = exact(line.discount_percent ?? 0, 'discount_percent');
  const taxRate = exact(line.tax_percent ?? 0, 'tax_percent');
  const kept = 100n * pow10(discount.scale) - discount.units;
  const amount = divideRounded(
    quantity.units * price.units * kept * pow10(digits),
    pow10(quantity.scale + price.scale + discount.scale) * 100n,
  );
  const tax = divideRounded(amount * taxRate.units, 100n * pow10(taxRate.scale));
  return { amount, tax };
}

/** A document's figures in minor units: its lines and the sums of their rounded figures. */
export interface DocumentAmounts {
  lines: LineAmounts[];
  subtotal: bigint;
  taxTotal: bigint;
  total: bigint;
}

export function documentTotals(lines: readonly LinePrice[], currency: string): DocumentAmounts {
  const priced = lines.map((line) => lineAmounts(line, currency));
  const subtotal = priced.reduce((sum, line) => sum + line.amount, 0n);
  const taxTotal = priced.reduce((sum, line) => sum + line.tax, 0n);
  return { lines: priced, subtotal, taxTotal, total: subtotal + taxTotal };
}

/** Why these lines cannot be priced in this currency (a figure past MAX_MINOR), or null when they can. */
export function totalsProblem(lines: readonly LinePrice[], currency: string): string | null {
  const totals = documentTotals(lines, currency);
  const largest = [totals.total, totals.subtotal, ...totals.lines.map((l) => l.amount)].find(
    (figure) => figure > MAX_MINOR || figure < -MAX_MINOR,
  );
  return largest === undefined
    ? null
    : `the amounts exceed ${formatMinor(MAX_MINOR, currency)} ${currency}, the largest this server keeps exactly`;
}

/**
 * An amount as every document prints it (the PDFs, the mails, the public proposal page):
 * "EUR 1,234.50", the currency code, then the amount with thousands separators and exactly the
 * currency's minor digits ("JPY 1,235", "KWD 1.235"). Exact: no float rounding. Throws
 * (RangeError) for an amount with more digits than the currency has, or an unknown currency.
 */
export function formatAmount(amount: number, currency: string): string {
  const text = formatMinor(toMinor(amount, currency), currency);
  const negative = text.startsWith('-');
  const unsigned = negative ? text.slice(1) : text;
  const [whole = '0', fraction] = unsigned.split('.');
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${currency} ${negative ? '-' : ''}${grouped}${fraction === undefined ? '' : `.${fraction}`}`;
}
