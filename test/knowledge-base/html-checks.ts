// What test/knowledge-base reads a sanitized body with: a real HTML parser (htmlparser2, which
// sanitize-html parses with) listing every element and decoded attribute, and the problems of one
// body, so a check sees what a browser would, not what a regular expression guesses.
import { Parser } from 'htmlparser2';
import { ALLOWED_TAGS } from '../../tools/knowledge-base/sanitize.ts';

interface Element {
  name: string;
  attribs: Record<string, string>;
}

/** Every element of the HTML as a browser-like parser reads it, with its decoded attributes. */
function elementsOf(html: string): Element[] {
  const elements: Element[] = [];
  const parser = new Parser(
    { onopentag: (name, attribs) => elements.push({ name, attribs }) },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.write(html);
  parser.end();
  return elements;
}

const NEVER = new Set([
  'script',
  'style',
  'iframe',
  'frame',
  'frameset',
  'object',
  'embed',
  'applet',
  'svg',
  'math',
  'form',
  'input',
  'button',
  'textarea',
  'select',
  'meta',
  'link',
  'base',
  'template',
  'xml',
  'body',
  'html',
]);
const URL_ATTRIBUTES = [
  'href',
  'src',
  'action',
  'formaction',
  'background',
  'dynsrc',
  'lowsrc',
  'data',
  'xlink:href',
];
/** A URL without what a browser ignores in it: whitespace and control characters. */
function compact(url: string): string {
  return [...url]
    .filter((c) => c.charCodeAt(0) > 0x20 && (c.charCodeAt(0) < 0x7f || c.charCodeAt(0) > 0x9f))
    .join('');
}
const EXECUTABLE_SCHEME = /^(javascript|vbscript|data|livescript):/i;

/** The problems of one sanitized body; empty when nothing in it can run. */
export function problemsOf(html: string): string[] {
  const problems: string[] = [];
  if (/<\s*script/i.test(html)) problems.push('a <script tag in the text');
  for (const { name, attribs } of elementsOf(html)) {
    if (NEVER.has(name)) problems.push(`element <${name}>`);
    if (!ALLOWED_TAGS.includes(name)) problems.push(`element <${name}> outside the allow-list`);
    for (const [attribute, value] of Object.entries(attribs)) {
      if (attribute.startsWith('on')) problems.push(`event handler ${attribute} on <${name}>`);
      if (attribute === 'style') problems.push(`style on <${name}>`);
      if (URL_ATTRIBUTES.includes(attribute) && EXECUTABLE_SCHEME.test(compact(value))) {
        problems.push(`${attribute}="${value}" on <${name}>`);
      }
    }
    if (name === 'a' && attribs.href !== undefined && !/^(https?:\/\/|mailto:|#)/i.test(attribs.href)) {
      problems.push(`link to ${attribs.href}`);
    }
    if (name === 'img' && !/^https?:\/\//i.test(attribs.src ?? ''))
      problems.push(`image from ${attribs.src}`);
  }
  return problems;
}
