// Reading `timestamp with time zone` values exactly. PostgreSQL sends them as text such as
// `0050-03-01 10:00:00+00`, `2026-05-01 09:00:00.123456+02`, `1850-01-01 00:00:00+00:09:21` (a
// historical offset) or `0044-03-15 12:00:00+00 BC`. drizzle's own column hands that text to
// `new Date()`, whose lenient parser reads a year below 100 as 1900 or 2000 plus it: a payment made
// in 0050 came back as 1950. Here every field is read by position and the year set with
// setUTCFullYear, which takes it as written.
const PG_TIMESTAMPTZ =
  /^(\d{4,})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?(?:([+-])(\d{2})(?::?(\d{2}))?(?::?(\d{2}))?)?( BC)?$/;

/** The instant a PostgreSQL timestamptz text names; anything else (infinity) as `new Date` reads it. */
export function parsePgTimestamptz(text: string): Date {
  const m = PG_TIMESTAMPTZ.exec(text);
  if (!m) return new Date(text);
  const [, y, mo, d, h, mi, s, frac, sign, oh, om, os, bc] = m;
  const year = bc ? 1 - Number(y) : Number(y);
  const date = new Date(0);
  date.setUTCFullYear(year, Number(mo) - 1, Number(d));
  date.setUTCHours(Number(h), Number(mi), Number(s), Math.floor(Number(`0.${frac ?? '0'}`) * 1000));
  const offsetSeconds =
    sign === undefined
      ? 0
      : (sign === '-' ? -1 : 1) * (Number(oh) * 3600 + Number(om ?? 0) * 60 + Number(os ?? 0));
  return new Date(date.getTime() - offsetSeconds * 1000);
}
