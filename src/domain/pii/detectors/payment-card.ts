import { finding, matchesOf, type PiiFinding } from '../types.ts';
import { luhnValid } from './luhn.ts';

// Card numbers are written without separators or in 4-digit groups (Amex/Diners: 4-6-5 / 4-6-4).
const CONTIGUOUS = /(?<![\w-])\d{13,19}(?![\w-])/g;
const FOUR_GROUPED = /(?<![\w-]|\d[ -])\d{4}([ -])\d{4}(?:\1\d{4}){1,3}(?:\1\d{1,3})?(?![\w-]|[ -]\d)/g;
const AMEX_GROUPED = /(?<![\w-]|\d[ -])\d{4}([ -])\d{6}\1\d{4,5}(?![\w-]|[ -]\d)/g;

/** Issuer prefixes (IIN ranges) with the lengths their cards are issued in. */
const ISSUERS: readonly { prefix: RegExp; lengths: readonly number[] }[] = [
  { prefix: /^4/, lengths: [13, 16, 19] }, // Visa
  { prefix: /^(?:5[1-5]|222[1-9]|22[3-9]\d|2[3-6]\d\d|27[01]\d|2720)/, lengths: [16] }, // Mastercard
  { prefix: /^3[47]/, lengths: [15] }, // American Express
  { prefix: /^(?:30[0-59]|3[689])/, lengths: [14, 16, 17, 18, 19] }, // Diners Club
  { prefix: /^35(?:2[89]|[3-8]\d)/, lengths: [16, 17, 18, 19] }, // JCB
  { prefix: /^(?:6011|64[4-9]|65|62)/, lengths: [16, 17, 18, 19] }, // Discover, UnionPay
  { prefix: /^220[0-4]/, lengths: [16, 17, 18, 19] }, // Mir
  // Maestro: issued from 12 digits, but its short forms collide with 15-digit IMEIs (Luhn-checked too).
  { prefix: /^(?:50|5[6-9]|6\d)/, lengths: [16, 17, 18, 19] },
];

/** Whether the digits form a card number: a known issuer prefix and length, and a valid Luhn check digit. */
export function isCardNumber(digits: string): boolean {
  const issuer = ISSUERS.some(({ prefix, lengths }) => lengths.includes(digits.length) && prefix.test(digits));
  return issuer && luhnValid(digits);
}

function grouped(text: string, pattern: RegExp): PiiFinding[] {
  const found: PiiFinding[] = [];
  for (const match of matchesOf(pattern, text)) {
    const raw = match[0];
    if (isCardNumber(raw.replace(/\D/g, ''))) {
      found.push(finding('payment_card', text, match.index, match.index + raw.length));
      continue;
    }
    // A short trailing group may be an expiry or CVC written right after the number.
    const trimmed = raw.replace(/[ -]\d{1,3}$/, '');
    if (trimmed !== raw && isCardNumber(trimmed.replace(/\D/g, ''))) {
      found.push(finding('payment_card', text, match.index, match.index + trimmed.length));
    }
  }
  return found;
}

/** Payment card numbers: 13–19 digits, contiguous or grouped with spaces or dashes, issuer- and Luhn-checked. */
export function detectPaymentCards(text: string): PiiFinding[] {
  const found: PiiFinding[] = [];
  for (const match of matchesOf(CONTIGUOUS, text)) {
    if (isCardNumber(match[0])) found.push(finding('payment_card', text, match.index, match.index + match[0].length));
  }
  return [...found, ...grouped(text, FOUR_GROUPED), ...grouped(text, AMEX_GROUPED)];
}
