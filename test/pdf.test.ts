// Locks in the business-document PDF (core/pdf.ts): read back with poppler's pdftotext it holds the number or DRAFT, parties, dates, every line, exact amounts in each currency's digits, totals and notes; names in Polish, Greek and Japanese come back exactly (embedded Unicode fonts, one run per font); long documents run to several pages with "Page n of m" and the totals on the last; a page renders as a non-blank A4 image; identical input gives identical bytes.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import PDFDocument from 'pdfkit';
import { afterAll, describe, expect, it } from 'vitest';
import type { PricedLine } from '../core/line-items.ts';
import { formatAmount, type PdfDocumentInput, renderDocumentPdf } from '../core/pdf.ts';
import { hasPoppler } from './support/poppler.ts';

const run = promisify(execFile);

const dir = mkdtempSync(join(tmpdir(), 'crm-pdf-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let fileCount = 0;
function save(bytes: Buffer): string {
  fileCount += 1;
  const path = join(dir, `doc-${fileCount}.pdf`);
  writeFileSync(path, bytes);
  return path;
}

/** The text of a PDF as pdftotext -layout prints it; pages are separated by form feeds. */
async function pdfText(bytes: Buffer): Promise<string> {
  const { stdout } = await run('pdftotext', ['-layout', save(bytes), '-']);
  return stdout;
}

async function pageCount(bytes: Buffer): Promise<number> {
  const { stdout } = await run('pdfinfo', [save(bytes)]);
  const match = /^Pages:\s+(\d+)/m.exec(stdout);
  if (!match) throw new Error(`pdfinfo printed no page count:\n${stdout}`);
  return Number(match[1]);
}

function line(description: string, quantity: number, unitPrice: number, amount: number, tax = 0): PricedLine {
  return {
    description,
    quantity,
    unit_price: unitPrice,
    discount_percent: 0,
    tax_percent: tax === 0 ? 0 : 20,
    amount,
    tax_amount: tax,
  };
}

function invoice(overrides: Partial<PdfDocumentInput> = {}): PdfDocumentInput {
  return {
    title: 'Invoice',
    number: 'INV-000042',
    status: 'open',
    seller: { name: 'Acme Widgets GmbH', lines: ['Hauptstrasse 1', '10115 Berlin', 'billing@acme.example'] },
    buyer: { name: 'Globex Corporation', lines: ['Hank Scorpio', 'hank@globex.example'] },
    dates: [
      { label: 'Issue date', value: '2026-03-01' },
      { label: 'Due date', value: '2026-03-31' },
    ],
    currency: 'EUR',
    lines: [line('Consulting hours', 1.5, 1234.5, 1851.75, 370.35), line('Travel expenses', 1, 99.99, 99.99)],
    totals: [
      { label: 'Subtotal', amount: 1951.74 },
      { label: 'Tax', amount: 370.35 },
      { label: 'Total', amount: 2322.09, emphasis: true },
      { label: 'Paid', amount: 1000 },
      { label: 'Amount due', amount: 1322.09, emphasis: true },
    ],
    notes: 'Payable by bank transfer.\nIBAN DE00 1234 5678 9012 3456 78',
    ...overrides,
  };
}

describe('formatAmount', () => {
  it('prints the currency code and exactly its minor digits, grouped by thousands', () => {
    expect(formatAmount(1234.5, 'EUR')).toBe('EUR 1,234.50');
    expect(formatAmount(0, 'EUR')).toBe('EUR 0.00');
    expect(formatAmount(1234567.89, 'USD')).toBe('USD 1,234,567.89');
    expect(formatAmount(1235, 'JPY')).toBe('JPY 1,235');
    expect(formatAmount(1.235, 'KWD')).toBe('KWD 1.235');
    expect(formatAmount(-5.1, 'EUR')).toBe('EUR -5.10');
    // 0.1 + 0.2 would be 0.30000000000000004 in floats; the exact decimal is 0.3.
    expect(formatAmount(0.3, 'EUR')).toBe('EUR 0.30');
    expect(formatAmount(999_999_999_999.99, 'EUR')).toBe('EUR 999,999,999,999.99');
  });

  it('refuses an amount with more digits than the currency has', () => {
    expect(() => formatAmount(1.5, 'JPY')).toThrow(RangeError);
    expect(() => formatAmount(1, 'XXX')).toThrow(RangeError);
  });
});

describe.skipIf(!hasPoppler)('renderDocumentPdf (read back with poppler)', () => {
  it('holds the number, status, parties, dates, every line, the totals and the notes', async () => {
    const bytes = await renderDocumentPdf(invoice());
    expect(bytes.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    const text = await pdfText(bytes);
    for (const expected of [
      'Invoice',
      'INV-000042',
      'Status: open',
      'Acme Widgets GmbH',
      '10115 Berlin',
      'Globex Corporation',
      'hank@globex.example',
      'Issue date',
      '2026-03-01',
      'Due date',
      '2026-03-31',
      'Consulting hours',
      'Travel expenses',
      'EUR 1,234.50',
      'EUR 1,851.75',
      'EUR 99.99',
      'EUR 1,951.74',
      'EUR 370.35',
      'EUR 2,322.09',
      'EUR 1,000.00',
      'EUR 1,322.09',
      'Amount due',
      'Payable by bank transfer.',
      'IBAN DE00 1234 5678 9012 3456 78',
      'Page 1 of 1',
    ]) {
      expect(text).toContain(expected);
    }
    expect(text).not.toContain('DRAFT');
  });

  it('says DRAFT where a draft has no number', async () => {
    const text = await pdfText(await renderDocumentPdf(invoice({ number: null, status: 'draft' })));
    expect(text).toContain('DRAFT');
    expect(text).not.toContain('INV-');
  });

  it('prints JPY without and KWD with three minor digits', async () => {
    const jpy = await pdfText(
      await renderDocumentPdf(
        invoice({
          currency: 'JPY',
          lines: [line('Tea ceremony', 3, 4500, 13500)],
          totals: [{ label: 'Total', amount: 1234567, emphasis: true }],
        }),
      ),
    );
    expect(jpy).toContain('JPY 4,500');
    expect(jpy).toContain('JPY 13,500');
    expect(jpy).toContain('JPY 1,234,567');
    expect(jpy).not.toMatch(/JPY [\d,]+\.\d/);
    const kwd = await pdfText(
      await renderDocumentPdf(
        invoice({
          title: 'Estimate',
          currency: 'KWD',
          lines: [line('Dates (kg)', 2, 1.235, 2.47)],
          totals: [{ label: 'Total', amount: 2.47, emphasis: true }],
        }),
      ),
    );
    expect(kwd).toContain('Estimate');
    expect(kwd).toContain('KWD 1.235');
    expect(kwd).toContain('KWD 2.470');
  });

  it('wraps a long description inside its column and keeps every word', async () => {
    const long = Array.from({ length: 60 }, (_, i) => `word${i}`).join(' ');
    const text = await pdfText(await renderDocumentPdf(invoice({ lines: [line(long, 1, 10, 10)] })));
    const lines = text.split('\n').filter((l) => /word\d/.test(l));
    expect(lines.length).toBeGreaterThan(3);
    for (let i = 0; i < 60; i++) expect(text).toMatch(new RegExp(`\\bword${i}\\b`));
  });

  it('runs a 120-line document over several pages, header and page numbers on each, totals on the last', async () => {
    const lines = Array.from({ length: 120 }, (_, i) => line(`Line item number ${i + 1}`, 1, 10, 10));
    const bytes = await renderDocumentPdf(
      invoice({ lines, totals: [{ label: 'Grand total', amount: 1200, emphasis: true }] }),
    );
    const pages = await pageCount(bytes);
    expect(pages).toBeGreaterThanOrEqual(3);
    const text = await pdfText(bytes);
    const pageTexts = text.split('\f').filter((p) => p.trim() !== '');
    expect(pageTexts).toHaveLength(pages);
    pageTexts.forEach((page, index) => {
      expect(page).toContain(`Page ${index + 1} of ${pages}`);
      expect(page).toMatch(/Description\s+Qty\s+Unit price/);
    });
    const last = pageTexts[pages - 1] ?? '';
    expect(last).toContain('Line item number 120');
    expect(last).toContain('Grand total');
    expect(last).toContain('EUR 1,200.00');
    expect(last).toContain('Payable by bank transfer.');
    for (let i = 1; i <= 120; i++) expect(text).toMatch(new RegExp(`Line item number ${i}\\b`));
  });

  it('prints names outside Latin-1 exactly (Polish, Greek, Japanese, mixed in one string), never as "?"', async () => {
    const bytes = await renderDocumentPdf(
      invoice({
        seller: { name: 'Ελληνική ΑΕ', lines: ['Αθήνα', 'billing@acme.example'] },
        buyer: { name: 'Łódź Trading', lines: ['株式会社', 'Zażółć gęślą jaźń'] },
        lines: [line('Дизайн 設計 Design', 1, 1234.5, 1234.5)],
        notes: 'Merci — 有難うございます',
      }),
    );
    const text = await pdfText(bytes);
    for (const expected of [
      'Ελληνική ΑΕ',
      'Αθήνα',
      'Łódź Trading',
      '株式会社',
      'Zażółć gęślą jaźń',
      'Дизайн 設計 Design',
      'Merci — 有難うございます',
    ]) {
      expect(text).toContain(expected);
    }
    expect(text).not.toContain('?');
    // Only the glyphs used are embedded: a CJK name adds kilobytes, not the megabytes of the font.
    expect(bytes.length).toBeLessThan(150_000);
    const same = await renderDocumentPdf(
      invoice({
        seller: { name: 'Ελληνική ΑΕ', lines: ['Αθήνα', 'billing@acme.example'] },
        buyer: { name: 'Łódź Trading', lines: ['株式会社', 'Zażółć gęślą jaźń'] },
        lines: [line('Дизайн 設計 Design', 1, 1234.5, 1234.5)],
        notes: 'Merci — 有難うございます',
      }),
    );
    expect(same.equals(bytes)).toBe(true);
  });

  it('gives identical bytes for identical input', async () => {
    const a = await renderDocumentPdf(invoice());
    const b = await renderDocumentPdf(invoice());
    expect(a.equals(b)).toBe(true);
    const c = await renderDocumentPdf(invoice({ number: 'INV-000043' }));
    expect(a.equals(c)).toBe(false);
  });

  it('renders a first page as a non-blank A4 image', async () => {
    const render = async (pdf: Buffer, name: string): Promise<Buffer> => {
      const path = save(pdf);
      const prefix = join(dir, name);
      await run('pdftoppm', ['-png', '-r', '50', '-f', '1', '-l', '1', '-singlefile', path, prefix]);
      return readFileSync(`${prefix}.png`);
    };
    const png = await render(await renderDocumentPdf(invoice()), 'invoice');
    expect(png.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))).toBe(
      true,
    );
    // The IHDR chunk comes first: length (4), "IHDR" (4), width (4), height (4).
    expect(png.subarray(12, 16).toString('latin1')).toBe('IHDR');
    const width = png.readUInt32BE(16);
    const height = png.readUInt32BE(20);
    // A4 is 595.28 x 841.89 points, 1/72 inch each, rendered at 50 pixels per inch.
    expect(Math.abs(width - (595.28 / 72) * 50)).toBeLessThanOrEqual(2);
    expect(Math.abs(height - (841.89 / 72) * 50)).toBeLessThanOrEqual(2);

    // An empty A4 page rendered the same way compresses to almost nothing; a page with text does not.
    const blank = new PDFDocument({ size: 'A4' });
    const chunks: Buffer[] = [];
    blank.on('data', (chunk: Buffer) => chunks.push(chunk));
    const ended = new Promise<void>((resolve) => blank.on('end', () => resolve()));
    blank.end();
    await ended;
    const blankPng = await render(Buffer.concat(chunks), 'blank');
    expect(blankPng.readUInt32BE(16)).toBe(width);
    expect(png.length).toBeGreaterThan(blankPng.length * 5);
    expect(statSync(join(dir, 'invoice.png')).size).toBe(png.length);
  });
});
