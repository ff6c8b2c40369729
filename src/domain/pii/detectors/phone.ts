import { parsePhoneNumberFromString, type PhoneNumber } from 'libphonenumber-js/max';
import { finding, matchesOf, type PiiFinding } from '../types.ts';

// With a country code (`+` or the `00` international prefix): digit groups separated by spaces, dots, dashes, parentheses.
const INTERNATIONAL = /(?<![\w+#/@$]|\d[.,])(?:\+|00)[1-9](?:[\s.-]?(?:\(\d{1,4}\)|\d)){5,19}/g;
// Without one a number is North American, grouped 3-3-4 (ISBNs, invoice and part numbers are not).
const NATIONAL = /(?<![\w+#/@$.-]|\d[.,])(?:1[\s.-])?(?:\(\d{3}\)\s?\d{3}[\s.-]\d{4}|\d{3}([\s.-])\d{3}\1\d{4}|\d{10})(?![\w-]|\.\d)/g;
// A match glued to an identifier (INV-…, #…, /api/…, v1.…) is part of it; a comma after it is a CSV field's end.
const GLUED_AFTER = /^(?:[\p{L}\p{N}_/\\@%-]|\.\d)/u;
// Bare digit runs are ambiguous with IDs; they count as phone numbers only after one of these words.
const CUE = /\b(?:call|phone|tel|telephone|mobile|cell|fax|whatsapp|sms|text|dial|ring|contact|reach)\b[^\n]{0,24}$/i;
const MIN_DIGITS = 7;
// E.164 allows 15 digits; a `00` prefix or a `(0)` trunk digit may add two more.
const MAX_DIGITS = 17;
// Trailing groups tried off a candidate: each try is a libphonenumber parse, so hostile input must not buy many.
const MAX_TRIMS = 4;

/** Parses memoised for one scan: logs and lists repeat the same numbers. */
type Parser = (raw: string) => PhoneNumber | undefined;

function digitCount(raw: string): number {
  return raw.replace(/\D/g, '').length;
}

function parseValid(raw: string): PhoneNumber | undefined {
  const international = raw.startsWith('00') ? `+${raw.slice(2)}` : raw;
  const parsed = parsePhoneNumberFromString(international, 'US');
  return parsed?.isValid() ? parsed : undefined;
}

/** Digit offsets at which a written number is split into groups (a `(0)` trunk prefix is not a digit of it). */
function groupBreaks(written: string): number[] {
  const groups = written
    .replace(/\(0\)/g, '')
    .split(/\D+/)
    .filter((group) => group !== '');
  const breaks: number[] = [];
  let at = 0;
  for (const group of groups.slice(0, -1)) breaks.push((at += group.length));
  return breaks;
}

/** Whether every break in the written number is one the country's own format has too. */
function groupedLikeItsCountry(raw: string, phone: PhoneNumber): boolean {
  const own = new Set(groupBreaks(phone.formatInternational()));
  return groupBreaks(raw.startsWith('00') ? `+${raw.slice(2)}` : raw).every((at) => own.has(at));
}

/**
 * The number at the start of an international candidate: trailing groups may be other numbers (an age, a count).
 * Of the valid prefixes the longest grouped as its country writes numbers wins (`+49 30 901820 85` is the Berlin
 * number 901820 and an 85), else the longest valid one.
 */
function bestInternational(raw: string, parse: Parser): string | null {
  let longestValid: string | null = null;
  for (let candidate = raw, trims = 0; digitCount(candidate) >= MIN_DIGITS && trims <= MAX_TRIMS; trims++) {
    const phone = digitCount(candidate) <= MAX_DIGITS ? parse(candidate) : undefined;
    if (phone !== undefined && groupedLikeItsCountry(candidate, phone)) return candidate;
    longestValid ??= phone === undefined ? null : candidate;
    const cut = candidate.search(/[\s.-]+(?:\(\d+\)|\d+)$/);
    if (cut < 0) break;
    candidate = candidate.slice(0, cut);
  }
  return longestValid;
}

function international(text: string, parse: Parser): PiiFinding[] {
  const found: PiiFinding[] = [];
  for (const match of matchesOf(INTERNATIONAL, text)) {
    const valid = bestInternational(match[0], parse);
    if (valid === null) continue;
    const end = match.index + valid.length;
    if (!GLUED_AFTER.test(text.slice(end, end + 2))) found.push(finding('phone', text, match.index, end));
  }
  return found;
}

function national(text: string, parse: Parser): PiiFinding[] {
  const found: PiiFinding[] = [];
  for (const match of matchesOf(NATIONAL, text)) {
    const raw = match[0];
    if (/^\d+$/.test(raw) && !CUE.test(text.slice(Math.max(0, match.index - 40), match.index))) continue;
    if (parse(raw) !== undefined) found.push(finding('phone', text, match.index, match.index + raw.length));
  }
  return found;
}

/** Phone numbers: international (+44 20 7946 0958, 0049 30 901820) or North American national ((415) 555-2671), validated against libphonenumber's metadata. */
export function detectPhones(text: string): PiiFinding[] {
  const parsed = new Map<string, PhoneNumber | undefined>();
  const parse: Parser = (raw) => {
    if (!parsed.has(raw)) parsed.set(raw, parseValid(raw));
    return parsed.get(raw);
  };
  return [...international(text, parse), ...national(text, parse)];
}
