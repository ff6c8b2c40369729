/** The kinds of personal data and secrets the scanner detects. */
export type PiiCategory = 'email' | 'phone' | 'payment_card' | 'iban' | 'us_ssn' | 'ip_address' | 'secret';

/** Every category the scanner detects. */
export const PII_CATEGORIES: readonly PiiCategory[] = ['email', 'phone', 'payment_card', 'iban', 'us_ssn', 'ip_address', 'secret'];

/** One detected value: its category and its UTF-16 offsets in the scanned text (`end` exclusive). */
export interface PiiFinding {
  category: PiiCategory;
  start: number;
  end: number;
  value: string;
}

/** A detector: every candidate of its category in a text, overlaps allowed. */
export type PiiDetector = (text: string) => PiiFinding[];

/** Builds a finding for `text.slice(start, end)`. */
export function finding(category: PiiCategory, text: string, start: number, end: number): PiiFinding {
  return { category, start, end, value: text.slice(start, end) };
}

const NO_MATCHES: readonly RegExpExecArray[] = [];

/**
 * The matches of a global pattern in a text. Most texts hold none, and `matchAll` copies its
 * pattern before it searches: a first `test` answers those without the copy.
 */
export function matchesOf(pattern: RegExp, text: string): Iterable<RegExpExecArray> {
  pattern.lastIndex = 0;
  if (!pattern.test(text)) return NO_MATCHES;
  pattern.lastIndex = 0;
  return text.matchAll(pattern);
}
