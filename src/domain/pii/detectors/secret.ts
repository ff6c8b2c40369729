import { finding, matchesOf, type PiiFinding } from '../types.ts';

/** Provider key formats; each needs a letter and a digit in its body so that placeholders like `sk-your-key-here` do not count. */
const TOKEN_PATTERNS: readonly RegExp[] = [
  /(?<![\w-])sk-ant-(?:api|admin)\d{2}-[A-Za-z0-9_-]{32,}(?![\w-])/g, // Anthropic
  /(?<![\w-])sk-(?!ant-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}(?![\w-])/g, // OpenAI
  /(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])/g, // AWS access key id
  /(?<![A-Za-z0-9_])gh[pousr]_[A-Za-z0-9]{36,255}(?![A-Za-z0-9_])/g, // GitHub
  /(?<![A-Za-z0-9_])github_pat_[A-Za-z0-9_]{50,255}(?![A-Za-z0-9_])/g, // GitHub fine-grained
  /(?<![\w-])xox[abposre]-[A-Za-z0-9-]{10,}(?![\w-])/g, // Slack
  /(?<![\w-])xapp-\d-[A-Za-z0-9-]{10,}(?![\w-])/g, // Slack app-level
  /(?<![\w-])(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}(?![\w-])/g, // Stripe secret and restricted
  /(?<![\w-])AIza[0-9A-Za-z_-]{35}(?![\w-])/g, // Google API key
];

const AWS_SECRET = /\baws_secret_access_key\b["']?\s*[:=]\s*["']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])/gi;
const JWT = /(?<![\w-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{16,}(?![\w-])/g;
const PEM_BEGIN = /-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY( BLOCK)?-----/g;
const PEM_END = /-----END ((?:[A-Z0-9]+ )*)PRIVATE KEY( BLOCK)?-----/g;
// A key pasted without its END line: the base64 lines that follow the BEGIN line.
const PEM_BODY = /(?:\s*[A-Za-z0-9+/=]{16,}(?![A-Za-z0-9+/=]))+/y;
// An RSA-8192 key in PEM is about 6.5 KB; an END further away closes some other block.
const MAX_PEM_CHARS = 16_384;

/** Whether a token body looks generated rather than typed: it mixes letters and digits. */
function looksGenerated(token: string): boolean {
  const body = token.replace(/^[a-z]+[-_](?:[a-z]+[-_])?/, '');
  return /\d/.test(body) && /[A-Za-z]/.test(body);
}

/** Whether a JWT candidate's header decodes to a JSON object naming an algorithm. */
function isJwt(token: string): boolean {
  try {
    const header: unknown = JSON.parse(Buffer.from(token.slice(0, token.indexOf('.')), 'base64url').toString('utf8'));
    return typeof header === 'object' && header !== null && 'alg' in header;
  } catch {
    return false;
  }
}

/** PEM private key blocks, BEGIN to END, or BEGIN and its base64 lines when the END line is missing. */
function privateKeyBlocks(text: string): PiiFinding[] {
  const found: PiiFinding[] = [];
  const ends = [...matchesOf(PEM_END, text)];
  let next = 0;
  for (const begin of matchesOf(PEM_BEGIN, text)) {
    const bodyStart = begin.index + begin[0].length;
    // BEGINs come in text order, so the first END after each is found in one pass over the ENDs.
    while (next < ends.length && ends[next]!.index < bodyStart) next++;
    const end = ends[next];
    if (end !== undefined && end[1] === begin[1] && end[2] === begin[2] && end.index - bodyStart <= MAX_PEM_CHARS) {
      found.push(finding('secret', text, begin.index, end.index + end[0].length));
      continue;
    }
    PEM_BODY.lastIndex = bodyStart;
    const body = PEM_BODY.exec(text);
    if (body !== null) found.push(finding('secret', text, begin.index, bodyStart + body[0].length));
  }
  return found;
}

/** API keys and tokens of common providers, JWTs and PEM private key blocks. */
export function detectSecrets(text: string): PiiFinding[] {
  const found: PiiFinding[] = [];
  for (const pattern of TOKEN_PATTERNS) {
    for (const match of matchesOf(pattern, text)) {
      if (looksGenerated(match[0])) found.push(finding('secret', text, match.index, match.index + match[0].length));
    }
  }
  for (const match of matchesOf(AWS_SECRET, text)) {
    const start = match.index + match[0].length - (match[1] ?? '').length;
    found.push(finding('secret', text, start, match.index + match[0].length));
  }
  for (const match of matchesOf(JWT, text)) {
    if (isJwt(match[0])) found.push(finding('secret', text, match.index, match.index + match[0].length));
  }
  return [...found, ...privateKeyBlocks(text)];
}
