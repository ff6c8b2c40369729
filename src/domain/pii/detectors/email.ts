import { finding, matchesOf, type PiiFinding } from '../types.ts';

// Local part per RFC 5322's common subset; the domain needs a dot and an alphabetic TLD.
const EMAIL =
  /(?<![\w.%+-])[A-Za-z0-9](?:[A-Za-z0-9._%+-]{0,62}[A-Za-z0-9_%+-])?@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+([A-Za-z]{2,24})(?![\w@-])/g;

// `icon@2x.png` and friends: retina asset names, not addresses.
const FILE_EXTENSIONS = new Set(['png', 'jpg', 'jpeg', 'gif', 'svg', 'webp', 'bmp', 'ico', 'pdf', 'js', 'ts', 'css', 'html', 'json']);

/** Email addresses (`name@example.com`). */
export function detectEmails(text: string): PiiFinding[] {
  const found: PiiFinding[] = [];
  if (!text.includes('@')) return found;
  for (const match of matchesOf(EMAIL, text)) {
    const tld = (match[1] ?? '').toLowerCase();
    if (FILE_EXTENSIONS.has(tld)) continue;
    found.push(finding('email', text, match.index, match.index + match[0].length));
  }
  return found;
}
