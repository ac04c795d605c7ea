// Language tags (BCP 47 shape) as the areas accept them: a 2-3 letter language, then subtags of 1-8
// letters or digits (en, pt-BR, zh-Hant-TW, es-419), kept in their usual case. The knowledge base's
// article locale and a voice agent's language share this one rule.
import { z } from 'zod';

/** A BCP 47 shape: a 2-3 letter language, then subtags of 1-8 letters or digits. */
const LANGUAGE_TAG = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$/;

/** The usual case of each subtag: language lower, region upper, script title case (pt-br -> pt-BR). */
function normalizeLanguageTag(tag: string): string {
  return tag
    .split('-')
    .map((part, i) => {
      if (i === 0) return part.toLowerCase();
      if (part.length === 2 && /^[A-Za-z]+$/.test(part)) return part.toUpperCase();
      if (part.length === 4 && /^[A-Za-z]+$/.test(part))
        return part[0]?.toUpperCase() + part.slice(1).toLowerCase();
      return part.toLowerCase();
    })
    .join('-');
}

/** A trimmed language tag of at most `max` characters, answered in its usual case; the caller describes it. */
export function languageTagField(max: number) {
  return z
    .string()
    .trim()
    .max(max)
    .regex(LANGUAGE_TAG, 'must be a language tag such as en, de or pt-BR')
    .transform(normalizeLanguageTag);
}
