import { detectEmails } from './detectors/email.ts';
import { detectIbans } from './detectors/iban.ts';
import { detectIpAddresses } from './detectors/ip-address.ts';
import { detectPaymentCards } from './detectors/payment-card.ts';
import { detectPhones } from './detectors/phone.ts';
import { detectSecrets } from './detectors/secret.ts';
import { detectUsSsns } from './detectors/us-ssn.ts';
import type { PiiCategory, PiiDetector, PiiFinding } from './types.ts';

/** Most specific first: a secret may hold digits that look like a phone, an IBAN digits that look like a card. */
const SPECIFICITY: readonly PiiCategory[] = ['secret', 'email', 'iban', 'payment_card', 'us_ssn', 'ip_address', 'phone'];

const DETECTORS: readonly PiiDetector[] = [detectSecrets, detectEmails, detectIbans, detectPaymentCards, detectUsSsns, detectIpAddresses, detectPhones];

function byPrecedence(a: PiiFinding, b: PiiFinding): number {
  const rank = SPECIFICITY.indexOf(a.category) - SPECIFICITY.indexOf(b.category);
  if (rank !== 0) return rank;
  return b.end - b.start - (a.end - a.start) || a.start - b.start;
}

/** Keeps, of overlapping candidates, the most specific (then the longest); returns them in text order. */
export function resolveOverlaps(candidates: PiiFinding[]): PiiFinding[] {
  // One flag per character: checking a candidate costs its length, not the number already kept.
  const taken = new Uint8Array(candidates.reduce((max, c) => Math.max(max, c.end), 0));
  const kept: PiiFinding[] = [];
  for (const candidate of [...candidates].sort(byPrecedence)) {
    if (taken.subarray(candidate.start, candidate.end).includes(1)) continue;
    taken.fill(1, candidate.start, candidate.end);
    kept.push(candidate);
  }
  return kept.sort((a, b) => a.start - b.start);
}

/** All findings in a text, non-overlapping (the more specific category wins an overlap), in order. */
export function scanText(text: string): PiiFinding[] {
  if (text.length === 0) return [];
  return resolveOverlaps(DETECTORS.flatMap((detect) => detect(text)));
}
