// Business documents (invoices, estimates) as PDF, drawn with pdfkit: a header with the title and
// the number (or DRAFT), the seller and the buyer, the dates, a table of priced lines whose header
// repeats on every page, the totals, the notes, and "Page n of m" at the foot of each page. Pure: it
// takes what to print and returns the bytes; callers (the areas) gather the data. Amounts print
// exactly (formatAmount goes through the integer minor units of core/money.ts). The same input gives
// the same bytes: the creation date (and the file id pdfkit derives from it) comes from the input,
// never from the clock, and the embedded font subsets are named after pdfkit's font ids.
//
// Fonts (docs/billing.md "Invoice delivery", docs/decisions.md "Unicode fonts in the PDFs"): the
// clients of our clients are called Łódź Trading, Ελληνική ΑΕ or 株式会社, so the PDFs embed TrueType
// fonts shipped in npm packages instead of the Latin-1-only standard fonts: DejaVu Sans (Latin with
// its extensions, Greek, Cyrillic, symbols) and, for what it lacks, Noto Sans JP (kana, CJK
// ideographs, full-width forms). pdfkit draws a string in one font, so every text is split into runs
// by the first font that has each character's glyph (fontkit's cmap lookup), and the runs are drawn
// one after the other. Only the glyphs used are embedded (pdfkit subsets), with a ToUnicode map, so
// the text copies and searches as written. A character no font has prints as "?".
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type * as Fontkit from 'fontkit';
import type PDFKitDocument from 'pdfkit';
import type { PricedLine } from './line-items.ts';
import { formatAmount } from './money.ts';

/** The one money format of the documents, kept here for the PDF's callers (core/money.ts has it). */
export { formatAmount };

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

/** A plain decimal (quantity, percent) as typed, without exponent: 1.5, 8.875. */
function formatNumber(value: number): string {
  return String(value);
}

// ---------------------------------------------------------------------------------------------
// Fonts and runs

type Weight = 'regular' | 'bold';

interface Face {
  /** The name the face is registered under in each document. */
  name: string;
  /** The parsed font, read once per process: glyph lookups, and what pdfkit draws and subsets. */
  font: Fontkit.Font;
}

/** The faces of one weight, in the order a character looks for its glyph. */
interface FontStack {
  weight: Weight;
  faces: Face[];
}

const FONT_FILES: Record<Weight, Array<{ name: string; file: string }>> = {
  regular: [
    { name: 'DejaVuSans', file: 'dejavu-fonts-ttf/ttf/DejaVuSans.ttf' },
    { name: 'NotoSansJP', file: '@expo-google-fonts/noto-sans-jp/400Regular/NotoSansJP_400Regular.ttf' },
  ],
  bold: [
    { name: 'DejaVuSans-Bold', file: 'dejavu-fonts-ttf/ttf/DejaVuSans-Bold.ttf' },
    { name: 'NotoSansJP-Bold', file: '@expo-google-fonts/noto-sans-jp/700Bold/NotoSansJP_700Bold.ttf' },
  ],
};

interface PdfLibraries {
  fontkit: typeof Fontkit;
  PDFDocument: typeof PDFKitDocument;
}

let libraries: PdfLibraries | undefined;

/**
 * pdfkit and fontkit unpack their Unicode tables when they load, a large part of a second: they
 * load with the first document rendered, not in every process that loads the areas (the server's
 * start, `crm tools call`, which only needs the route table).
 */
async function loadPdfLibraries(): Promise<PdfLibraries> {
  libraries ??= { fontkit: await import('fontkit'), PDFDocument: (await import('pdfkit')).default };
  return libraries;
}

function loadedPdfLibraries(): PdfLibraries {
  if (!libraries) throw new Error('the PDF libraries are loaded by renderDocumentPdf first');
  return libraries;
}

function loadFace(name: string, file: string): Face {
  const bytes = readFileSync(createRequire(import.meta.url).resolve(file));
  const font = loadedPdfLibraries().fontkit.create(bytes);
  if ('fonts' in font) throw new Error(`${file} is a font collection, not one font`);
  return { name, font };
}

const stacks = new Map<Weight, FontStack>();

/** The font stack of a weight, loaded on first use (the CJK font is a few megabytes). */
function stackOf(weight: Weight): FontStack {
  let stack = stacks.get(weight);
  if (!stack) {
    stack = { weight, faces: FONT_FILES[weight].map(({ name, file }) => loadFace(name, file)) };
    stacks.set(weight, stack);
  }
  return stack;
}

/** A piece of text drawn in one face. */
interface Run {
  face: string;
  text: string;
}

/**
 * The text as runs of the first face that has each character's glyph. Line breaks stay, tabs and
 * other control characters become spaces, and a character no face has becomes "?" (in the first
 * face), so the document always renders.
 */
function runsOf(text: string, weight: Weight): Run[] {
  const { faces } = stackOf(weight);
  const primary = faces[0]?.name ?? '';
  const runs: Run[] = [];
  for (const ch of text) {
    const code = ch.codePointAt(0) ?? 0;
    let face = primary;
    let out = ch;
    if (ch !== '\n' && (code < 0x20 || (code >= 0x7f && code < 0xa0))) out = ' ';
    else if (ch !== '\n') {
      const holder = faces.find((f) => f.font.hasGlyphForCodePoint(code));
      if (holder) face = holder.name;
      else out = '?';
    }
    const last = runs[runs.length - 1];
    // Spaces and line breaks join the run before them: fewer font switches, same glyphs.
    if (last && (last.face === face || out === ' ' || out === '\n')) last.text += out;
    else runs.push({ face, text: out });
  }
  return runs.length > 0 ? runs : [{ face: primary, text: '' }];
}

type Pdf = InstanceType<typeof PDFKitDocument>;
type TextOptions = PDFKit.Mixins.TextOptions;

// pdfkit takes a parsed fontkit font as a font source too (PDFFontFactory.open: anything with a
// `layout` function); its type declarations only list bytes and paths.
declare global {
  namespace PDFKit.Mixins {
    interface PDFFont {
      registerFont(name: string, src: Fontkit.Font): this;
    }
  }
}

/**
 * Registers every face of both weights in a new document (pdfkit embeds only those it draws with).
 * The parsed fonts are shared by all documents: parsing the tables and shaping text again for each
 * document made rendering several times slower, and a document only reads them (each one builds
 * its own subset).
 */
function registerFonts(pdf: Pdf): void {
  for (const weight of ['regular', 'bold'] as const) {
    for (const face of stackOf(weight).faces) pdf.registerFont(face.name, face.font);
  }
}

/**
 * Draws `text` at (x, y) in the weight and size, one run per face: the first run places the text,
 * the next ones continue it (pdfkit's `continued`), so wrapping and the line's alignment go on
 * across faces.
 */
function write(
  pdf: Pdf,
  text: string,
  weight: Weight,
  size: number,
  x: number,
  y: number,
  options: TextOptions = {},
): void {
  const runs = runsOf(text, weight);
  runs.forEach((run, index) => {
    const more = index < runs.length - 1;
    pdf.font(run.face).fontSize(size);
    if (index === 0) pdf.text(run.text, x, y, { ...options, continued: more });
    else pdf.text(run.text, { ...options, continued: more });
  });
}

/** The height `text` takes at this width: the tallest of its runs' faces measuring the whole text. */
function heightOf(pdf: Pdf, text: string, weight: Weight, size: number, options: TextOptions): number {
  let height = 0;
  for (const face of new Set(runsOf(text, weight).map((run) => run.face))) {
    pdf.font(face).fontSize(size);
    height = Math.max(height, pdf.heightOfString(text, options));
  }
  return height;
}

/** The line height of the primary face of a weight at a size. */
function lineHeightOf(pdf: Pdf, weight: Weight, size: number): number {
  pdf.font(stackOf(weight).faces[0]?.name ?? '').fontSize(size);
  return pdf.currentLineHeight();
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
  { key: 'discount', label: 'Disc%', width: 40, align: 'right' },
  { key: 'tax', label: 'Tax%', width: 35, align: 'right' },
  { key: 'amount', label: 'Amount', width: CONTENT_WIDTH - 205 - 45 - 85 - 40 - 35, align: 'right' },
];

function cellText(line: PricedLine, key: Column['key'], currency: string): string {
  switch (key) {
    case 'description':
      return line.description;
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

function drawTableHeader(pdf: Pdf, y: number): number {
  let x = MARGIN;
  for (const column of COLUMNS) {
    write(pdf, column.label, 'bold', BODY_SIZE, x + CELL_PADDING, y, {
      width: column.width - 2 * CELL_PADDING,
      align: column.align,
      lineBreak: false,
    });
    x += column.width;
  }
  const bottom = y + lineHeightOf(pdf, 'bold', BODY_SIZE) + CELL_PADDING;
  pdf
    .moveTo(MARGIN, bottom)
    .lineTo(MARGIN + CONTENT_WIDTH, bottom)
    .lineWidth(0.8)
    .strokeColor('#333333')
    .stroke();
  return bottom + CELL_PADDING;
}

function rowHeight(pdf: Pdf, line: PricedLine, currency: string): number {
  let height = 0;
  for (const column of COLUMNS) {
    const h = heightOf(pdf, cellText(line, column.key, currency), 'regular', BODY_SIZE, {
      width: column.width - 2 * CELL_PADDING,
      align: column.align,
    });
    height = Math.max(height, h);
  }
  return height + 2 * CELL_PADDING;
}

function drawRow(pdf: Pdf, line: PricedLine, currency: string, y: number, height: number): void {
  pdf.fillColor('#000000');
  let x = MARGIN;
  for (const column of COLUMNS) {
    write(
      pdf,
      cellText(line, column.key, currency),
      'regular',
      BODY_SIZE,
      x + CELL_PADDING,
      y + CELL_PADDING,
      {
        width: column.width - 2 * CELL_PADDING,
        align: column.align,
      },
    );
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
  pdf.fillColor('#555555');
  write(pdf, heading.toUpperCase(), 'bold', 8, x, y, { width });
  pdf.fillColor('#000000');
  write(pdf, party.name, 'bold', 11, x, pdf.y + 2, { width });
  for (const line of party.lines) write(pdf, line, 'regular', BODY_SIZE, x, pdf.y + 1, { width });
  return pdf.y;
}

/** A document-information string: PDF strings are Unicode, only control characters are dropped. */
function infoText(text: string): string {
  return text.replace(/\p{Cc}+/gu, ' ');
}

/** Renders the document; resolves with the PDF bytes. */
export async function renderDocumentPdf(doc: PdfDocumentInput): Promise<Buffer> {
  const { PDFDocument } = await loadPdfLibraries();
  const createdAt = doc.createdAt ?? defaultCreatedAt(doc);
  const label = doc.number ?? 'DRAFT';
  const pdf = new PDFDocument({
    size: 'A4',
    margins: { top: MARGIN, bottom: MARGIN + FOOTER_HEIGHT, left: MARGIN, right: MARGIN },
    bufferPages: true,
    info: {
      Title: infoText(`${doc.title} ${label}`),
      Author: infoText(doc.seller.name),
      Producer: 'CRM',
      Creator: 'CRM',
      CreationDate: createdAt,
      ModDate: createdAt,
    },
  });
  registerFonts(pdf);
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    pdf.on('data', (chunk: Buffer) => chunks.push(chunk));
    pdf.on('end', () => resolve(Buffer.concat(chunks)));
    pdf.on('error', reject);
  });

  // Title block: the title on the left, number (or DRAFT) and status on the right.
  pdf.fillColor('#000000');
  write(pdf, doc.title, 'bold', 22, MARGIN, MARGIN, { lineBreak: false });
  pdf.fillColor(doc.number === null ? '#b00020' : '#000000');
  write(pdf, label, 'bold', 14, MARGIN, MARGIN + 2, { width: CONTENT_WIDTH, align: 'right' });
  pdf.fillColor('#555555');
  write(pdf, `Status: ${doc.status}`, 'regular', BODY_SIZE, MARGIN, pdf.y + 2, {
    width: CONTENT_WIDTH,
    align: 'right',
  });
  pdf.fillColor('#000000');

  // Parties side by side.
  const partiesTop = MARGIN + 50;
  const half = (CONTENT_WIDTH - 20) / 2;
  const sellerBottom = drawParty(pdf, 'From', doc.seller, MARGIN, partiesTop, half);
  const buyerBottom = drawParty(pdf, 'Bill to', doc.buyer, MARGIN + half + 20, partiesTop, half);
  let y = Math.max(sellerBottom, buyerBottom) + 14;

  // Dates as label: value lines.
  for (const date of doc.dates) {
    write(pdf, `${date.label}:`, 'bold', BODY_SIZE, MARGIN, y, { width: 90, lineBreak: false });
    write(pdf, date.value, 'regular', BODY_SIZE, MARGIN + 95, y, { width: CONTENT_WIDTH - 95 });
    y = pdf.y + 2;
  }
  write(pdf, `Currency: ${doc.currency}`, 'regular', BODY_SIZE, MARGIN, y, { width: CONTENT_WIDTH });
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
    const weight: Weight = total.emphasis ? 'bold' : 'regular';
    const size = total.emphasis ? 11 : BODY_SIZE + 1;
    const height = lineHeightOf(pdf, weight, size) + 4;
    if (y + height > CONTENT_BOTTOM) {
      pdf.addPage();
      y = MARGIN;
    }
    write(pdf, total.label, weight, size, labelX, y, {
      width: labelWidth - 10,
      align: 'right',
      lineBreak: false,
    });
    write(pdf, formatAmount(total.amount, doc.currency), weight, size, valueX, y, {
      width: valueWidth - CELL_PADDING,
      align: 'right',
      lineBreak: false,
    });
    y += height;
  }

  // Notes: wrapped, continuing on new pages as needed.
  if (doc.notes) {
    y += 16;
    if (y + 3 * lineHeightOf(pdf, 'bold', BODY_SIZE) > CONTENT_BOTTOM) {
      pdf.addPage();
      y = MARGIN;
    }
    write(pdf, 'Notes', 'bold', BODY_SIZE, MARGIN, y, { width: CONTENT_WIDTH });
    // Paragraph by paragraph, each placed explicitly so text never runs into the footer.
    y = pdf.y + 2;
    for (const paragraph of doc.notes.split('\n')) {
      const text = paragraph || ' ';
      const height = heightOf(pdf, text, 'regular', BODY_SIZE, { width: CONTENT_WIDTH });
      if (y + height > CONTENT_BOTTOM) {
        pdf.addPage();
        y = MARGIN;
      }
      write(pdf, text, 'regular', BODY_SIZE, MARGIN, y, { width: CONTENT_WIDTH });
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
    pdf.fillColor('#555555');
    write(
      pdf,
      `${doc.title} ${label} - Page ${index - range.start + 1} of ${range.count}`,
      'regular',
      8,
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
