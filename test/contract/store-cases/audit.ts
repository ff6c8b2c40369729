/** Contract cases of AuditRepository, tampering included. */
import { expect, it } from 'vitest';
import { GENESIS_HASH, auditEventHash } from '../../../src/domain/audit/hash-chain.ts';
import type { AuditEvent, AuditEventInput } from '../../../src/infra/store/repository.ts';
import { uid, type StoreContext } from './context.ts';

const T0 = Date.UTC(2025, 4, 1, 12);

function auditInput(tenantId: string, overrides: Partial<AuditEventInput> = {}): AuditEventInput {
  return {
    id: `aud_${uid()}${uid()}`,
    tenantId,
    actor: 'key_admin',
    action: 'key.created',
    target: 'key_new',
    outcome: 'success',
    requestId: `req_${uid()}`,
    details: { role: 'app', scopes: ['chat', 'usage'], limits: { rpm: 60, ratio: 0.25 }, note: null },
    createdAt: new Date(T0 + 1),
    ...overrides,
  };
}

/** `count` events of one tenant, a millisecond apart. */
function inputs(tenantId: string, count: number, from = 0): AuditEventInput[] {
  return Array.from({ length: count }, (_, i) => auditInput(tenantId, { createdAt: new Date(T0 + (from + i) * 1000) }));
}

const seqs = (events: AuditEvent[]) => events.map((e) => e.seq);

/** Registers the audit cases against `store`. */
export function auditCases(store: StoreContext): void {
  const audit = () => store.repo().audit;
  const all = (tenantId: string) => audit().list({ tenantId }, 1000, null);

  it('chains appended events: numbered 1…n, each linked to the hash of the one before', async () => {
    const tenantId = `t-${uid()}`;
    const batch = [...inputs(tenantId, 2), auditInput(tenantId, { target: null, requestId: null, details: {}, outcome: 'denied' })];
    const appended = await audit().append(batch);
    expect(seqs(appended)).toEqual([1, 2, 3]);
    expect(appended.map((e) => e.prevHash)).toEqual([GENESIS_HASH, appended[0]?.hash, appended[1]?.hash]);
    appended.forEach((event, i) => {
      expect(event).toEqual({ ...batch[i], seq: i + 1, prevHash: event.prevHash, hash: auditEventHash(event, i + 1, event.prevHash) });
    });
    const more = await audit().append(inputs(tenantId, 1, 10));
    expect(more[0]).toMatchObject({ seq: 4, prevHash: appended[2]?.hash });
    expect(await all(tenantId)).toEqual([...appended, ...more].reverse());
    expect(await audit().verify(tenantId)).toEqual({ ok: true, events: 4 });
  });

  it('stores details as JSON (Dates as strings, undefined dropped) and still verifies', async () => {
    const tenantId = `t-${uid()}`;
    const [appended] = await audit().append([auditInput(tenantId, { details: { at: new Date(T0), gone: undefined, list: [1, 'two'] } })]);
    const expected = { at: new Date(T0).toISOString(), list: [1, 'two'] };
    expect(appended?.details).toEqual(expected);
    expect((await all(tenantId))[0]?.details).toEqual(expected);
    expect(await audit().verify(tenantId)).toEqual({ ok: true, events: 1 });
  });

  it('skips an id already stored and returns the stored event', async () => {
    const tenantId = `t-${uid()}`;
    const [first] = await audit().append(inputs(tenantId, 1));
    if (!first) throw new Error('nothing appended');
    const again = auditInput(tenantId, { id: first.id, actor: 'someone-else' });
    const next = auditInput(tenantId);
    const result = await audit().append([again, next, next]);
    expect(result[0]).toEqual(first);
    expect(result[1]).toMatchObject({ id: next.id, seq: 2, prevHash: first.hash });
    expect(result[2]).toEqual(result[1]);
    expect(seqs(await all(tenantId))).toEqual([2, 1]);
    expect(await audit().verify(tenantId)).toEqual({ ok: true, events: 2 });
  });

  it('keeps one unbroken chain under concurrent appends for one tenant', async () => {
    const tenantId = `t-${uid()}`;
    const batches = Array.from({ length: 10 }, (_, i) => inputs(tenantId, 2, i * 2));
    const results = await Promise.all(batches.map((batch) => audit().append(batch)));
    // Order within a batch holds; other appends may interleave between its events.
    for (const result of results) expect(result[1]?.seq).toBeGreaterThan(result[0]?.seq ?? Infinity);
    expect(seqs(results.flat()).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(await audit().verify(tenantId)).toEqual({ ok: true, events: 20 });
  });

  it('chains each tenant of a mixed batch separately and never lists across tenants', async () => {
    const [a, b] = [`t-${uid()}`, `t-${uid()}`];
    const result = await audit().append([auditInput(a), auditInput(b), auditInput(a), auditInput(b), auditInput(b)]);
    expect(seqs(result)).toEqual([1, 1, 2, 2, 3]);
    expect(seqs(await all(a))).toEqual([2, 1]);
    expect((await all(b)).every((event) => event.tenantId === b)).toBe(true);
    expect(await audit().verify(a)).toEqual({ ok: true, events: 2 });
    expect(await audit().verify(b)).toEqual({ ok: true, events: 3 });
    expect(await all(`t-${uid()}`)).toEqual([]);
    expect(await audit().verify(`t-${uid()}`)).toEqual({ ok: true, events: 0 });
  });

  it('lists newest first with action, actor and time filters, paged by beforeSeq', async () => {
    const tenantId = `t-${uid()}`;
    await audit().append([
      auditInput(tenantId, { action: 'key.created', actor: 'key_1', createdAt: new Date(T0) }),
      auditInput(tenantId, { action: 'key.revoked', actor: 'key_1', createdAt: new Date(T0 + 1000) }),
      auditInput(tenantId, { action: 'key.created', actor: 'key_2', createdAt: new Date(T0 + 2000) }),
      auditInput(tenantId, { action: 'auth.denied', actor: 'anonymous', createdAt: new Date(T0 + 3000) }),
    ]);
    const list = (filter: object, limit = 10, beforeSeq: number | null = null) =>
      audit()
        .list({ tenantId, ...filter }, limit, beforeSeq)
        .then(seqs);
    expect(await list({})).toEqual([4, 3, 2, 1]);
    expect(await list({}, 2)).toEqual([4, 3]);
    expect(await list({}, 2, 3)).toEqual([2, 1]);
    expect(await list({ action: 'key.created' })).toEqual([3, 1]);
    expect(await list({ actor: 'key_1' })).toEqual([2, 1]);
    expect(await list({ actor: 'key_1', action: 'key.created' })).toEqual([1]);
    expect(await list({ since: new Date(T0 + 1000), until: new Date(T0 + 3000) })).toEqual([3, 2]);
    expect(await list({ since: new Date(T0 + 2000) }, 10, 4)).toEqual([3]);
  });

  it('names an event whose stored fields were edited', async () => {
    const tenantId = `t-${uid()}`;
    const events = await audit().append(inputs(tenantId, 5));
    const victim = events[2] as AuditEvent;
    await store.tamper().editEvent(victim.id, { actor: 'key_innocent' });
    expect(await audit().verify(tenantId)).toMatchObject({
      ok: false,
      events: 3,
      brokenAt: { id: victim.id, seq: 3 },
      reason: expect.stringContaining('edited'),
    });
    const other = `t-${uid()}`;
    const [, second] = await audit().append(inputs(other, 3));
    await store.tamper().editEvent(second?.id ?? '', { details: { role: 'admin' } });
    expect(await audit().verify(other)).toMatchObject({ ok: false, brokenAt: { id: second?.id, seq: 2 } });
  });

  it('names the event after one that was deleted', async () => {
    const tenantId = `t-${uid()}`;
    const events = await audit().append(inputs(tenantId, 4));
    await store.tamper().deleteEvent(events[1]?.id ?? '');
    expect(await audit().verify(tenantId)).toMatchObject({ ok: false, brokenAt: { id: events[2]?.id, seq: 3 }, reason: expect.stringContaining('removed') });
  });

  it('names the last event when events were deleted from the end, and keeps the gap on the next append', async () => {
    const tenantId = `t-${uid()}`;
    const events = await audit().append(inputs(tenantId, 4));
    await store.tamper().deleteEvent(events[3]?.id ?? '');
    expect(await audit().verify(tenantId)).toMatchObject({ ok: false, events: 3, brokenAt: { id: events[3]?.id, seq: 4 } });
    const [next] = await audit().append(inputs(tenantId, 1, 10));
    expect(next?.seq).toBe(5);
    expect(await audit().verify(tenantId)).toMatchObject({ ok: false, brokenAt: { id: next?.id, seq: 5 } });
  });
}
