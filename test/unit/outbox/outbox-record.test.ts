/** An outbox record read back is the record written, its dates revived. */
import { expect, it } from 'vitest';
import { decodeOutboxRecord, encodeOutboxRecord, type OutboxRecord } from '../../../src/infra/outbox/outbox.ts';
import type { UsageRecord } from '../../../src/infra/store/repository.ts';

const usage: UsageRecord = {
  requestId: 'req_01',
  tenantId: 'acme',
  keyId: 'key_01',
  feature: 'search',
  operation: 'chat',
  requestedModel: 'svc-flash',
  model: 'flash-a',
  provider: 'openai-compatible',
  upstreamModel: 'm',
  promptName: null,
  promptVersion: null,
  promptTokens: 12,
  completionTokens: 20,
  totalTokens: 32,
  cachedTokens: 0,
  cacheWriteTokens: 0,
  reasoningTokens: 0,
  usageSource: 'provider',
  costMicros: 52,
  status: 'succeeded',
  errorCode: null,
  queueWaitMs: 3,
  ttftMs: null,
  latencyMs: 40,
  stream: false,
  piiFlags: ['email'],
  responseId: null,
  batchId: null,
  customId: null,
  deployment: null,
  cacheHit: false,
  createdAt: new Date('2026-11-28T20:45:01.234Z'),
};

it('a usage record comes back whole, its creation time a Date of the same instant', () => {
  const record: OutboxRecord = { kind: 'usage', record: usage };
  const line = encodeOutboxRecord(record);
  expect(JSON.parse(line)).toMatchObject({ kind: 'usage', record: { createdAt: '2026-11-28T20:45:01.234Z' } });
  expect(decodeOutboxRecord(line)).toEqual(record);
});

it('writing a usage record leaves the record it was given as it was', () => {
  encodeOutboxRecord({ kind: 'usage', record: usage });
  expect(usage.createdAt).toBeInstanceOf(Date);
});
