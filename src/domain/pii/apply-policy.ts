import { PiiDetectedError } from '../../errors/gateway-error.ts';
import { PiiMasker, scanText } from './scanner.ts';
import type { AuditEventInput, PiiPolicy } from '../../infra/store/repository.ts';
import { auditEvent } from '../audit/audit-event.ts';

/** What the policy did: the body to send (masked when the policy masks) and the categories found. */
export interface PiiOutcome<Body> {
  body: Body;
  categories: string[];
}

/** Replaces one text of a body; `param` says where it is, as the client would name it. */
export type TextReplacer = (text: string, param: string) => string;

/** A body's texts, each passed through `replace` (an operation's `mapTexts`). */
export type MapTexts<Body> = (body: Body, replace: TextReplacer) => Body;

/** The critical findings of one text. */
function criticalIn(text: string, critical: ReadonlySet<string>) {
  return scanText(text).filter((finding) => critical.has(finding.category));
}

function masked(text: string, masker: PiiMasker, found: Set<string>, critical: ReadonlySet<string>): string {
  const findings = criticalIn(text, critical);
  if (findings.length === 0) return text;
  let result = '';
  let at = 0;
  for (const finding of findings) {
    found.add(finding.category);
    result += text.slice(at, finding.start) + masker.placeholderFor(finding);
    at = finding.end;
  }
  return result + text.slice(at);
}

/**
 * Applies the tenant's PII policy to the texts the provider would see (named-prompt variables are
 * in them, substituted): `block` refuses with 422 naming the categories and where they are, `mask`
 * replaces each finding with a typed placeholder, `flag` passes them and reports the categories.
 * Only the policy's critical categories count.
 */
export function applyPiiPolicy<Body>(policy: PiiPolicy, body: Body, mapTexts: MapTexts<Body>): PiiOutcome<Body> {
  if (policy.mode === 'off' || policy.critical.length === 0) return { body, categories: [] };
  const critical = new Set(policy.critical);
  const found = new Set<string>();
  if (policy.mode === 'mask') {
    // One masker per request: the same value gets the same placeholder in every text.
    const masker = new PiiMasker();
    const result = mapTexts(body, (text) => masked(text, masker, found, critical));
    return { body: result, categories: [...found].sort() };
  }
  const where: string[] = [];
  mapTexts(body, (text, param) => {
    const findings = criticalIn(text, critical);
    if (findings.length > 0 && !where.includes(param)) where.push(param);
    for (const finding of findings) found.add(finding.category);
    return text;
  });
  const categories = [...found].sort();
  if (policy.mode === 'block' && categories.length > 0) throw new PiiDetectedError(categories, where);
  return { body, categories };
}

/** What each mode's finding is called in the audit log. */
const PII_AUDIT = {
  block: { action: 'pii.blocked', outcome: 'blocked' },
  mask: { action: 'pii.masked', outcome: 'success' },
  flag: { action: 'pii.flagged', outcome: 'flagged' },
  // A policy that is off finds nothing to record; were it given findings, they are findings.
  off: { action: 'pii.flagged', outcome: 'flagged' },
} as const satisfies Record<PiiPolicy['mode'], { action: string; outcome: string }>;

/**
 * The audit event of what the policy did to a request (blocked, masked or flagged), for the
 * tenant's audit log; null when it found nothing. `details` adds to the categories found.
 */
export function piiAuditEvent(
  mode: PiiPolicy['mode'],
  categories: string[],
  request: { tenantId: string; actor: string; requestId: string; details?: Record<string, unknown> },
): AuditEventInput | null {
  if (categories.length === 0) return null;
  const { action, outcome } = PII_AUDIT[mode];
  return auditEvent({
    tenantId: request.tenantId,
    actor: request.actor,
    action,
    outcome,
    requestId: request.requestId,
    details: { categories, ...request.details },
  });
}
