// Business documents (invoices, estimates) as PDF, drawn with pdfkit and its built-in Helvetica
// fonts: a header with the title and the number (or DRAFT), the seller and the buyer, the dates, a
// table of priced lines whose header repeats on every page, the totals, the notes, and "Page n of m"
// at the foot of each page. Pure: it takes what to print and returns the bytes; callers (the areas)
// gather the data. Amounts print exactly (formatAmount goes through the integer minor units of
// core/money.ts). The same input gives the same bytes: the creation date (and the file id pdfkit
// derives from it) comes from the input, never from the clock.
//
// The standard PDF fonts only cover Latin-1 (WinAnsi); other characters are replaced by "?" rather
// than printed as garbage, and the document still renders.
import PDFDocument from 'pdfkit';
import type { PricedLine } from './line-items.ts';
import { formatMinor, toMinor } from './money.ts';

export interface PdfParty {
  name: string;
  /** Address or e-mail lines, printed under the name. */
  lines: string[];
}

export interface PdfDocumentInput {
  title: 'Invoice' | 'Estimate';
  /** null -> the PDF says "DRAFT" where the number goes. */
  number: string | null;
  status: string;
  /** The organization. */
  seller: PdfParty;
  /** The lead (with the contact's name and e-mail). */
  buyer: PdfParty;
  /** e.g. Issue date, Due date, Valid until. */
  dates: Array<{ label: string; value: string }>;
  currency: string;
  lines: readonly PricedLine[];
  /** Subtotal, Tax, Total, Paid, Amount due... in the document's currency. */
  totals: Array<{ label: string; amount: number; emphasis?: boolean }>;
  notes?: string | null;
  /**
   * The PDF's creation date. Default: the first of `dates` that is a calendar date (YYYY-MM-DD),
   * else 2000-01-01, so identical input always gives identical bytes.
   */
  createdAt?: Date;
}

/**
 * An amount as "EUR 1,234.50": the currency code, then the amount with thousands separators and
 * exactly the currency's minor digits ("JPY 1,235", "KWD 1.235"). Exact: no float rounding. Throws
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

/** A plain decimal (quantity, percent) as typed, without exponent: 1.5, 8.875. */
function formatNumber(value: number): string {
  return String(value);
}

/** Characters the standard fonts can draw (Latin-1 printable, tab/newline); the rest become "?". */
function printable(text: string): string {
  let out = '';
  for (const ch of text) {
    const code = ch.codePointAt(0) ?? 0;
    if (ch === '\n') out += ch;
    else if (ch === '\t') out += ' ';
    else if ((code >= 0x20 && code < 0x7f) || (code >= 0xa0 && code <= 0xff)) out += ch;
    else if (ch === '\u2019' || ch === '\u2018') out += "'";
    else if (ch === '\u201c' || ch === '\u201d') out += '"';
    else if (ch === '\u2013' || ch === '\u2014') out += '-';
    else if (code < 0x20 || code === 0x7f) out += ' ';
    else out += '?';
  }
  return out;
}

const CALENDAR_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

function defaultCreatedAt(doc: PdfDocumentInput): Date {
  for (const { value } of doc.dates) {
    const match = CALENDAR_DATE.exec(value);
    if (match) {
      const date = new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])));
      if (!Number.isNaN(date.getTime())) return date;
    }
  }
  return new Date(Date.UTC(2000, 0, 1));
}

// A4 in points, and the layout.
const PAGE_WIDTH = 595.28;
const PAGE_HEIGHT = 841.89;
const MARGIN = 50;
const FOOTER_HEIGHT = 30;
const CONTENT_WIDTH = PAGE_WIDTH - 2 * MARGIN;
/** Lowest y a row or total may reach before a new page starts. */
const CONTENT_BOTTOM = PAGE_HEIGHT - MARGIN - FOOTER_HEIGHT;
const FONT = 'Helvetica';
const BOLD = 'Helvetica-Bold';
const BODY_SIZE = 9;
const CELL_PADDING = 4;

interface Column {
  key: 'description' | 'quantity' | 'unit_price' | 'discount' | 'tax' | 'amount';
  label: string;
  width: number;
  align: 'left' | 'right';
}

const COLUMNS: Column[] = [
  { key: 'description', label: 'Description', width: 205, align: 'left' },
  { key: 'quantity', label: 'Qty', width: 45, align: 'right' },
  { key: 'unit_price', label: 'Unit price', width: 85, align: 'right' },
  { key: 'discount', label: 'Disc. %', width: 40, align: 'right' },
  { key: 'tax', label: 'Tax %', width: 35, align: 'right' },
  { key: 'amount', label: 'Amount', width: CONTENT_WIDTH - 205 - 45 - 85 - 40 - 35, align: 'right' },
];

function cellText(line: PricedLine, key: Column['key'], currency: string): string {
  switch (key) {
    case 'description':
      return printable(line.description);
    case 'quantity':
      return formatNumber(line.quantity);
    case 'unit_price':
      return formatAmount(line.unit_price, currency);
    case 'discount':
      return line.discount_percent ? formatNumber(line.discount_percent) : '';
    case 'tax':
      return line.tax_percent ? formatNumber(line.tax_percent) : '';
    case 'amount':
      return formatAmount(line.amount, currency);
  }
}

type Pdf = InstanceType<typeof PDFDocument>;

function drawTableHeader(pdf: Pdf, y: number): number {
  pdf.font(BOLD).fontSize(BODY_SIZE);
  let x = MARGIN;
  for (const column of COLUMNS) {
    pdf.text(column.label, x + CELL_PADDING, y, {
      width: column.width - 2 * CELL_PADDING,
      align: column.align,
      lineBreak: false,
    });
    x += column.width;
  }
  const bottom = y + pdf.currentLineHeight() + CELL_PADDING;
  pdf
    .moveTo(MARGIN, bottom)
    .lineTo(MARGIN + CONTENT_WIDTH, bottom)
    .lineWidth(0.8)
    .strokeColor('#333333')
    .stroke();
  pdf.font(FONT);
  return bottom + CELL_PADDING;
}

function rowHeight(pdf: Pdf, line: PricedLine, currency: string): number {
  pdf.font(FONT).fontSize(BODY_SIZE);
  let height = 0;
  for (const column of COLUMNS) {
    const h = pdf.heightOfString(cellText(line, column.key, currency), {
      width: column.width - 2 * CELL_PADDING,
      align: column.align,
    });
    height = Math.max(height, h);
  }
  return height + 2 * CELL_PADDING;
}

function drawRow(pdf: Pdf, line: PricedLine, currency: string, y: number, height: number): void {
  pdf.font(FONT).fontSize(BODY_SIZE).fillColor('#000000');
  let x = MARGIN;
  for (const column of COLUMNS) {
    pdf.text(cellText(line, column.key, currency), x + CELL_PADDING, y + CELL_PADDING, {
      width: column.width - 2 * CELL_PADDING,
      align: column.align,
    });
    x += column.width;
  }
  const bottom = y + height;
  pdf
    .moveTo(MARGIN, bottom)
    .lineTo(MARGIN + CONTENT_WIDTH, bottom)
    .lineWidth(0.3)
    .strokeColor('#bbbbbb')
    .stroke();
}

function drawParty(pdf: Pdf, heading: string, party: PdfParty, x: number, y: number, width: number): number {
  pdf.font(BOLD).fontSize(8).fillColor('#555555').text(heading.toUpperCase(), x, y, { width });
  pdf
    .font(BOLD)
    .fontSize(11)
    .fillColor('#000000')
    .text(printable(party.name), x, pdf.y + 2, { width });
  pdf.font(FONT).fontSize(BODY_SIZE);
  for (const line of party.lines) pdf.text(printable(line), x, pdf.y + 1, { width });
  return pdf.y;
}

/** Renders the document; resolves with the PDF bytes. */
export function renderDocumentPdf(doc: PdfDocumentInput): Promise<Buffer> {
  const createdAt = doc.createdAt ?? defaultCreatedAt(doc);
  const label = doc.number ?? 'DRAFT';
  const pdf = new PDFDocument({
    size: 'A4',
    margins: { top: MARGIN, bottom: MARGIN + FOOTER_HEIGHT, left: MARGIN, right: MARGIN },
    bufferPages: true,
    info: {
      Title: printable(`${doc.title} ${label}`),
      Author: printable(doc.seller.name),
      Producer: 'CRM',
      Creator: 'CRM',
      CreationDate: createdAt,
      ModDate: createdAt,
    },
  });
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    pdf.on('data', (chunk: Buffer) => chunks.push(chunk));
    pdf.on('end', () => resolve(Buffer.concat(chunks)));
    pdf.on('error', reject);
  });

  // Title block: the title on the left, number (or DRAFT) and status on the right.
  pdf.font(BOLD).fontSize(22).fillColor('#000000').text(doc.title, MARGIN, MARGIN, { lineBreak: false });
  pdf
    .font(BOLD)
    .fontSize(14)
    .fillColor(doc.number === null ? '#b00020' : '#000000')
    .text(printable(label), MARGIN, MARGIN + 2, { width: CONTENT_WIDTH, align: 'right' });
  pdf
    .font(FONT)
    .fontSize(BODY_SIZE)
    .fillColor('#555555')
    .text(`Status: ${printable(doc.status)}`, MARGIN, pdf.y + 2, { width: CONTENT_WIDTH, align: 'right' });
  pdf.fillColor('#000000');

  // Parties side by side.
  const partiesTop = MARGIN + 50;
  const half = (CONTENT_WIDTH - 20) / 2;
  const sellerBottom = drawParty(pdf, 'From', doc.seller, MARGIN, partiesTop, half);
  const buyerBottom = drawParty(pdf, 'Bill to', doc.buyer, MARGIN + half + 20, partiesTop, half);
  let y = Math.max(sellerBottom, buyerBottom) + 14;

  // Dates as label: value lines.
  for (const date of doc.dates) {
    pdf
      .font(BOLD)
      .fontSize(BODY_SIZE)
      .text(`${printable(date.label)}:`, MARGIN, y, {
        width: 90,
        lineBreak: false,
      });
    pdf.font(FONT).text(printable(date.value), MARGIN + 95, y, { width: CONTENT_WIDTH - 95 });
    y = pdf.y + 2;
  }
  pdf.font(FONT).text(`Currency: ${doc.currency}`, MARGIN, y, { width: CONTENT_WIDTH });
  y = pdf.y + 14;

  // The lines, with the table header repeated on each new page.
  y = drawTableHeader(pdf, y);
  for (const line of doc.lines) {
    const height = rowHeight(pdf, line, doc.currency);
    if (y + height > CONTENT_BOTTOM) {
      pdf.addPage();
      y = drawTableHeader(pdf, MARGIN);
    }
    drawRow(pdf, line, doc.currency, y, height);
    y += height;
  }

  // Totals, right-aligned under the amount column.
  y += 10;
  const labelWidth = 150;
  const valueWidth = 130;
  const valueX = MARGIN + CONTENT_WIDTH - valueWidth;
  const labelX = valueX - labelWidth;
  for (const total of doc.totals) {
    const font = total.emphasis ? BOLD : FONT;
    const size = total.emphasis ? 11 : BODY_SIZE + 1;
    pdf.font(font).fontSize(size);
    const height = pdf.currentLineHeight() + 4;
    if (y + height > CONTENT_BOTTOM) {
      pdf.addPage();
      y = MARGIN;
    }
    pdf.font(font).fontSize(size);
    pdf.text(printable(total.label), labelX, y, { width: labelWidth - 10, align: 'right', lineBreak: false });
    pdf.text(formatAmount(total.amount, doc.currency), valueX, y, {
      width: valueWidth - CELL_PADDING,
      align: 'right',
      lineBreak: false,
    });
    y += height;
  }

  // Notes: wrapped, continuing on new pages as needed.
  if (doc.notes) {
    y += 16;
    pdf.font(BOLD).fontSize(BODY_SIZE);
    if (y + 3 * pdf.currentLineHeight() > CONTENT_BOTTOM) {
      pdf.addPage();
      y = MARGIN;
    }
    pdf.text('Notes', MARGIN, y, { width: CONTENT_WIDTH });
    pdf.font(FONT).fontSize(BODY_SIZE);
    // Paragraph by paragraph, each line placed explicitly so text never runs into the footer.
    const words = printable(doc.notes).split('\n');
    y = pdf.y + 2;
    for (const paragraph of words) {
      const height = pdf.heightOfString(paragraph || ' ', { width: CONTENT_WIDTH });
      if (y + height > CONTENT_BOTTOM) {
        pdf.addPage();
        y = MARGIN;
      }
      pdf.text(paragraph || ' ', MARGIN, y, { width: CONTENT_WIDTH });
      y = pdf.y;
    }
  }

  // Footer on every page: "Page n of m". The bottom margin is lifted while writing below it, or
  // pdfkit would start a new page.
  const range = pdf.bufferedPageRange();
  for (let index = range.start; index < range.start + range.count; index++) {
    pdf.switchToPage(index);
    const bottom = pdf.page.margins.bottom;
    pdf.page.margins.bottom = 0;
    pdf
      .font(FONT)
      .fontSize(8)
      .fillColor('#555555')
      .text(
        `${doc.title} ${printable(label)} - Page ${index - range.start + 1} of ${range.count}`,
        MARGIN,
        PAGE_HEIGHT - MARGIN - 10,
        { width: CONTENT_WIDTH, align: 'center', lineBreak: false },
      );
    pdf.page.margins.bottom = bottom;
  }
  pdf.flushPages();
  pdf.end();
  return done;
}
