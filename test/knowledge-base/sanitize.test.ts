// Locks in the article body sanitizer: no OWASP XSS Filter Evasion Cheat Sheet vector leaves anything that runs (read back with a real HTML parser), ordinary formatting passes unchanged, and the plain text is the body's words.
import { describe, expect, it } from 'vitest';
import { cleanBody, htmlToText } from '../../tools/knowledge-base/sanitize.ts';
import { problemsOf } from './html-checks.ts';
import { OWASP_XSS_VECTORS } from './owasp-xss-vectors.ts';

describe('the OWASP XSS filter evasion vectors', () => {
  it('are a real list', () => {
    expect(OWASP_XSS_VECTORS.length).toBeGreaterThanOrEqual(60);
    expect(new Set(OWASP_XSS_VECTORS).size).toBe(OWASP_XSS_VECTORS.length);
  });

  it('catches what it is meant to catch', () => {
    expect(problemsOf('<p onclick="x">a</p>')).toEqual(['event handler onclick on <p>']);
    expect(problemsOf('<a href="java&#x09;script:alert(1)">a</a>')).toHaveLength(2);
    expect(problemsOf('<svg></svg>')).toContain('element <svg>');
    expect(problemsOf('<p>fine</p>')).toEqual([]);
  });

  it.each(OWASP_XSS_VECTORS.map((vector, i) => [i, vector]))(
    'vector %i leaves nothing that runs',
    (_i, vector) => {
      const { html } = cleanBody(vector);
      expect(problemsOf(html), html).toEqual([]);
      // Once clean stays clean: sanitizing the output again changes nothing.
      expect(cleanBody(html).html).toBe(html);
    },
  );

  it('leaves nothing that runs when every vector is one body', () => {
    const { html } = cleanBody(OWASP_XSS_VECTORS.join('\n'));
    expect(problemsOf(html)).toEqual([]);
  });
});

describe('ordinary formatting', () => {
  const FORMATTED =
    '<h1>Title</h1><h2>Sub</h2><p>Text with <strong>bold</strong>, <em>italic</em>, <b>b</b>, <i>i</i>, <u>u</u>, <s>s</s>, ' +
    '<code>x = 1</code> and a <a href="https://example.com/docs?a=1&amp;b=2" title="Docs">link</a>, ' +
    '<a href="mailto:help@example.com">mail</a>, <a href="#setup">anchor</a>.</p><ul><li>One</li><li>Two</li></ul>' +
    '<ol start="3"><li>Three</li></ol><blockquote><p>Quoted</p></blockquote><pre><code>npm install &lt;pkg&gt;\n  --save</code></pre>' +
    '<p><img src="https://example.com/a.png" alt="Screenshot" /></p><table><thead><tr><th colspan="2">Head</th></tr></thead>' +
    '<tbody><tr><td>a</td><td>b</td></tr></tbody></table><h3>h3</h3><h4>h4</h4><h5>h5</h5><h6>h6</h6><p>Line<br />break</p><hr />';

  it('passes unchanged', () => {
    expect(cleanBody(FORMATTED)).toMatchObject({ html: FORMATTED, empty: false });
  });

  it('keeps the text of what it removes around, but not the removed code', () => {
    const { html } = cleanBody(
      '<p onclick="steal()">Keep <b>this</b></p><script>steal()</script><style>p{}</style>',
    );
    expect(html).toBe('<p>Keep <b>this</b></p>');
  });

  it('drops a link target it does not allow but keeps the link text', () => {
    expect(
      cleanBody('<a href="/relative">a</a> <a href="//evil.example">b</a> <a href="ftp://x">c</a>').html,
    ).toBe('<a>a</a> <a>b</a> <a>c</a>');
    expect(cleanBody('<img src="http://example.com/x.png"><img src="/local.png">').html).toBe(
      '<img src="http://example.com/x.png" />',
    );
  });

  it('reads as plain text line by line, entities decoded', () => {
    expect(
      htmlToText(
        '<h1>Reset</h1><p>Open <b>Settings</b> &amp; click   Reset.</p><ul><li>a</li><li>b</li></ul>',
      ).text,
    ).toBe('Reset\nOpen Settings & click Reset.\na\nb');
  });

  it('calls a body with no text and no image empty', () => {
    for (const body of [
      '<p></p>',
      '<script>alert(1)</script>',
      '<img src="javascript:alert(1)">',
      '  <br />  ',
    ]) {
      expect(cleanBody(body).empty, body).toBe(true);
    }
    expect(cleanBody('<img src="https://example.com/a.png">').empty).toBe(false);
  });
});
