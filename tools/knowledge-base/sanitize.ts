// An article's body as stored: the HTML a caller sent, cleaned by sanitize-html down to ordinary
// formatting (paragraphs, headings, emphasis, lists, links, images, code, quotes, tables), and the
// same body as plain text for search, snippets and AI context. Nothing that runs survives: scripts,
// styles, event handlers, frames, forms, SVG and MathML go, and a link or image keeps its URL only
// when it is http(s) (links: also mailto and in-page #anchors). docs/areas/knowledge-base.md.
import { Parser } from 'htmlparser2';
import sanitizeHtml from 'sanitize-html';

const HEADINGS = ['h1', 'h2', 'h3', 'h4', 'h5', 'h6'];
const TABLES = ['table', 'caption', 'thead', 'tbody', 'tfoot', 'tr', 'th', 'td', 'colgroup', 'col'];

/** The tags an article may keep. */
export const ALLOWED_TAGS: readonly string[] = [
  'p',
  'br',
  'hr',
  'div',
  'span',
  ...HEADINGS,
  'strong',
  'b',
  'em',
  'i',
  'u',
  's',
  'sub',
  'sup',
  'mark',
  'small',
  'abbr',
  'ul',
  'ol',
  'li',
  'dl',
  'dt',
  'dd',
  'a',
  'img',
  'code',
  'pre',
  'kbd',
  'samp',
  'blockquote',
  ...TABLES,
];

/**
 * Elements dropped together with everything inside them: what they hold is code, a form or
 * something embedded, never article text.
 */
const DROPPED_WITH_CONTENT = [
  'script',
  'style',
  'textarea',
  'option',
  'select',
  'noscript',
  'iframe',
  'frame',
  'frameset',
  'object',
  'embed',
  'applet',
  'svg',
  'math',
  'template',
  'title',
  'head',
  'xmp',
  'noembed',
  'noframes',
  'plaintext',
  'button',
];

const LINK_URL = /^(https?:\/\/|mailto:|#)/i;
const IMAGE_URL = /^https?:\/\//i;

/** Keeps an attribute's URL only when it matches; sanitize-html's own scheme check runs after. */
function keepUrl(attribs: sanitizeHtml.Attributes, name: string, allowed: RegExp): sanitizeHtml.Attributes {
  const value = attribs[name];
  if (value === undefined || allowed.test(value.trim())) return attribs;
  const { [name]: _dropped, ...rest } = attribs;
  return rest;
}

const OPTIONS: sanitizeHtml.IOptions = {
  allowedTags: [...ALLOWED_TAGS],
  allowedAttributes: {
    a: ['href', 'title'],
    img: ['src', 'alt', 'title', 'width', 'height'],
    abbr: ['title'],
    ol: ['start', 'reversed'],
    th: ['colspan', 'rowspan', 'scope'],
    td: ['colspan', 'rowspan'],
    col: ['span'],
    colgroup: ['span'],
  },
  allowedClasses: {},
  allowedStyles: {},
  parseStyleAttributes: false,
  allowedSchemes: ['http', 'https', 'mailto'],
  allowedSchemesByTag: { img: ['http', 'https'] },
  allowedSchemesAppliedToAttributes: ['href', 'src', 'cite'],
  allowProtocolRelative: false,
  allowVulnerableTags: false,
  disallowedTagsMode: 'discard',
  nonTextTags: DROPPED_WITH_CONTENT,
  enforceHtmlBoundary: false,
  // An image whose source was refused shows nothing: it goes.
  exclusiveFilter: (frame) => frame.tag === 'img' && !frame.attribs.src,
  transformTags: {
    a: (tagName, attribs) => ({ tagName, attribs: keepUrl(attribs, 'href', LINK_URL) }),
    img: (tagName, attribs) => ({ tagName, attribs: keepUrl(attribs, 'src', IMAGE_URL) }),
  },
};

/** Tags that end a line of the plain text. */
const BLOCKS = new Set([
  'p',
  'br',
  'hr',
  'div',
  ...HEADINGS,
  'ul',
  'ol',
  'li',
  'dl',
  'dt',
  'dd',
  'pre',
  'blockquote',
  'table',
  'caption',
  'tr',
]);

export interface CleanBody {
  /** The sanitized HTML that is stored and answered. */
  html: string;
  /** The same body as plain text: one line per block, spaces collapsed. */
  text: string;
  /** True when nothing readable is left: no text and no image. */
  empty: boolean;
}

/** The plain text of (sanitized) HTML, and whether it shows an image. */
export function htmlToText(html: string): { text: string; images: number } {
  let out = '';
  let images = 0;
  const parser = new Parser(
    {
      onopentag(name) {
        if (name === 'img') images += 1;
        if (BLOCKS.has(name)) out += '\n';
        else if (name === 'td' || name === 'th') out += ' ';
      },
      onclosetag(name) {
        if (BLOCKS.has(name)) out += '\n';
      },
      ontext(text) {
        out += text;
      },
    },
    { decodeEntities: true },
  );
  parser.write(html);
  parser.end();
  const text = out
    .split('\n')
    .map((line) => line.replace(/\s+/g, ' ').trim())
    .filter((line) => line.length > 0)
    .join('\n');
  return { text, images };
}

/** Cleans a body the caller sent. */
export function cleanBody(dirty: string): CleanBody {
  const html = sanitizeHtml(dirty, OPTIONS).trim();
  const { text, images } = htmlToText(html);
  return { html, text, empty: text.length === 0 && images === 0 };
}
