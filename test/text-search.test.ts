// Locks in the pure helpers of a search's exact total (core/text-search.ts): reading the word
// prefixes out of a tsquery's text form, and the upper end of the range of words with a prefix.
import { describe, expect, test } from 'vitest';
import { prefixLexemes, prefixUpperBound } from '../core/text-search.ts';

describe('prefixLexemes', () => {
  test('reads an AND of word prefixes, unescaping quotes and backslashes', () => {
    expect(prefixLexemes("'harbor':*")).toEqual(['harbor']);
    expect(prefixLexemes("'acme':* & 'harbor':* & '12':*")).toEqual(['acme', 'harbor', '12']);
    expect(prefixLexemes("'o''brien':* & 'a\\\\b':*")).toEqual(["o'brien", 'a\\b']);
    expect(prefixLexemes("'café':* & 'ωmega':*")).toEqual(['café', 'ωmega']);
  });

  test('refuses every other shape: empty, whole words, phrases, or, not', () => {
    for (const query of [
      '',
      "'harbor'",
      "'harbor':* & 'acme'",
      "'foo-bar':* <-> 'foo':* <-> 'bar':*",
      "'a':* | 'b':*",
      "!'a':*",
      "'a':*&'b':*",
      "'a':* & ",
    ]) {
      expect(prefixLexemes(query), query).toBeNull();
    }
  });
});

describe('prefixUpperBound', () => {
  test('increments the last code point', () => {
    expect(prefixUpperBound('harbor')).toBe('harbos');
    expect(prefixUpperBound('caf\u00e9')).toBe('caf\u00ea');
    expect(prefixUpperBound('a\u{1f600}')).toBe('a\u{1f601}');
  });

  test('skips the surrogate code points and carries past U+10FFFF', () => {
    expect(prefixUpperBound('a\ud7ff')).toBe('a\ue000');
    expect(prefixUpperBound('a\u{10ffff}')).toBe('b');
    expect(prefixUpperBound('\u{10ffff}\u{10ffff}')).toBeNull();
  });

  test('bounds exactly the strings that start with the prefix, in code point order', () => {
    // Code point order is UTF-8 byte order, the order of a COLLATE "C" column.
    const bytes = (s: string) => Buffer.from(s, 'utf8');
    const below = (a: string, b: string) => Buffer.compare(bytes(a), bytes(b)) < 0;
    const prefix = 'har\u00e9';
    const upper = prefixUpperBound(prefix) ?? '';
    const words = [
      'har',
      'har\u00e9',
      'har\u00e9\u{10ffff}\u{10ffff}',
      'har\u00e9z',
      'har\u00ea',
      'har\u00e8zzz',
      'harz',
      'hara',
    ];
    for (const word of words) {
      const inRange = !below(word, prefix) && below(word, upper);
      expect(inRange, word).toBe(word.startsWith(prefix));
    }
  });
});
