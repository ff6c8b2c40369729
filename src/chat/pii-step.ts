import type { FastifyRequest } from 'fastify';
import { PiiDetectedError } from '../errors/gateway-error.ts';
import { PiiMasker, scanText } from '../pii/scanner.ts';
import type { PiiPolicy } from '../store/repository.ts';
import { auditEvent, type AuditSink } from '../audit/audit-event.ts';
import type { ChatMessage } from '../wire/openai-chat.ts';

/** What the policy did: the messages to send (masked when the policy masks) and the categories found. */
export interface PiiOutcome {
  messages: ChatMessage[];
  categories: string[];
}

/** The critical findings of one message, per text part. */
function criticalIn(text: string, critical: ReadonlySet<string>) {
  return scanText(text).filter((finding) => critical.has(finding.category));
}

function maskContent(content: ChatMessage['content'], masker: PiiMasker, found: Set<string>, critical: ReadonlySet<string>): ChatMessage['content'] {
  const mask = (text: string) => {
    const findings = criticalIn(text, critical);
    if (findings.length === 0) return text;
    for (const finding of findings) found.add(finding.category);
    let masked = '';
    let at = 0;
    // One masker per request: the same value gets the same placeholder in every message.
    for (const finding of findings) {
      masked += text.slice(at, finding.start) + masker.placeholderFor(finding);
      at = finding.end;
    }
    return masked + text.slice(at);
  };
  if (typeof content === 'string') return mask(content);
  if (!Array.isArray(content)) return content;
  return content.map((part) => (typeof (part as { text?: unknown }).text === 'string' ? { ...part, text: mask((part as unknown as { text: string }).text) } : part));
}

function texts(content: ChatMessage['content']): string[] {
  if (typeof content === 'string') return [content];
  if (!Array.isArray(content)) return [];
  return content.flatMap((part) => (typeof (part as { text?: unknown }).text === 'string' ? [(part as unknown as { text: string }).text] : []));
}

/**
 * Applies the tenant's PII policy to the messages the provider would see (named-prompt
 * variables are in them, substituted): `block` refuses with 422 naming categories and
 * messages, `mask` replaces each finding with a typed placeholder, `flag` passes them
 * and reports the categories. Only the policy's critical categories count.
 */
export function applyPiiPolicy(policy: PiiPolicy, messages: ChatMessage[]): PiiOutcome {
  if (policy.mode === 'off' || policy.critical.length === 0) return { messages, categories: [] };
  const critical = new Set(policy.critical);
  if (policy.mode === 'mask') {
    const masker = new PiiMasker();
    const found = new Set<string>();
    const masked = messages.map((message) => ({ ...message, content: maskContent(message.content, masker, found, critical) }));
    return { messages: masked, categories: [...found].sort() };
  }
  const found = new Set<string>();
  const where: number[] = [];
  messages.forEach((message, index) => {
    const findings = texts(message.content).flatMap((text) => criticalIn(text, critical));
    if (findings.length > 0) where.push(index);
    for (const finding of findings) found.add(finding.category);
  });
  const categories = [...found].sort();
  if (policy.mode === 'block' && categories.length > 0) throw new PiiDetectedError(categories, where);
  return { messages, categories };
}

/** Records what the policy did (blocked, masked or flagged), for the tenant's audit log. */
export function auditPii(audit: AuditSink, request: FastifyRequest, mode: PiiPolicy['mode'], categories: string[]): void {
  if (categories.length === 0) return;
  const outcome = mode === 'block' ? 'blocked' : mode === 'mask' ? 'success' : 'flagged';
  const event = auditEvent({ tenantId: request.principal.tenantId, actor: request.principal.keyId, action: `pii.${mode === 'block' ? 'blocked' : mode === 'mask' ? 'masked' : 'flagged'}`, outcome, requestId: request.id, details: { categories } });
  audit(event).catch((error: unknown) => request.log.error({ err: error }, 'recording a PII event in the audit log failed'));
}
