/** Contract cases of BatchRepository: batches, their transitions and pages, and their lines' results. */
import { expect, it } from 'vitest';
import { BATCH_STATUSES, type BatchLineResult, type BatchUsage, type StoredBatch } from '../../../src/infra/store/repository.ts';
import { uid, type StoreContext } from './context.ts';
import { NOT_YET_VALIDATED } from '../../../src/domain/batches/batch-object.ts';

const CREATED = Date.UTC(2025, 5, 2, 9);
const DAY_MS = 86_400_000;

const usage = (n: number): BatchUsage => ({ inputTokens: 10 * n, cachedTokens: n, outputTokens: 5 * n, reasoningTokens: 2 * n, totalTokens: 15 * n });

/** Registers the cases on a store. */
export function batchCases(store: StoreContext): void {
  const batches = () => store.repo().batches;

  // Ids that sort in creation order, as the gateway's ULIDs do.
  let made = 0;
  const nextId = (prefix = 'batch_') => `${prefix}${String(++made).padStart(6, '0')}${uid()}`;

  /** A batch just created (validating), every optional field empty; `fields` sets the interesting ones. */
  function batch(tenantId: string, fields: Partial<StoredBatch> = {}): StoredBatch {
    return {
      id: nextId(),
      tenantId,
      keyId: 'key_a',
      dialect: 'openai',
      endpoint: '/v1/chat/completions',
      inputFileId: `file-${uid()}`,
      completionWindow: '24h',
      status: 'validating',
      metadata: null,
      feature: null,
      createdAt: new Date(CREATED),
      expiresAt: new Date(CREATED + DAY_MS),
      ...NOT_YET_VALIDATED,
      errors: [],
      segments: [],
      ...fields,
    };
  }

  async function created(tenantId: string, fields: Partial<StoredBatch> = {}): Promise<StoredBatch> {
    const b = batch(tenantId, fields);
    await batches().create(b);
    return b;
  }

  function result(of: StoredBatch, line: number, fields: Partial<BatchLineResult> = {}): BatchLineResult {
    return {
      tenantId: of.tenantId,
      batchId: of.id,
      line,
      customId: `req-${line}`,
      requestId: `batch_req_${uid()}`,
      status: 'succeeded',
      statusCode: 200,
      body: JSON.stringify({ id: `chatcmpl-${line}`, choices: [{ message: { content: `answer ${line} "quoted" \\ é` } }] }),
      usage: usage(line + 1),
      ...fields,
    };
  }

  it('creates a batch and reads it back exactly, only under its tenant', async () => {
    const tenantId = `t-${uid()}`;
    const full = await created(tenantId, {
      dialect: 'anthropic',
      id: nextId('msgbatch_'),
      endpoint: '/v1/messages',
      status: 'completed',
      // Keys MongoDB would refuse or read as operators, kept as they are.
      metadata: { project: 'alpha', 'a.b': 'dotted', $where: 'dollar' },
      feature: 'nightly',
      errors: [
        { code: 'invalid_json', message: 'Line 3 is not JSON.', param: null, line: 3 },
        { code: 'too_many_lines', message: 'The file has too many lines.', param: 'input_file_id', line: null },
      ],
      total: 3,
      segments: [
        { firstLine: 0, lines: 2, offset: 0 },
        { firstLine: 2, lines: 1, offset: 311 },
      ],
      outputFileId: `file-${uid()}`,
      errorFileId: `file-${uid()}`,
      usage: usage(7),
      inProgressAt: new Date(CREATED + 1_000),
      finalizingAt: new Date(CREATED + 2_000),
      completedAt: new Date(CREATED + 3_000),
      failedAt: new Date(CREATED + 4_000),
      expiredAt: new Date(CREATED + 5_000),
      cancellingAt: new Date(CREATED + 6_000),
      cancelledAt: new Date(CREATED + 7_000),
    });
    const sparse = await created(tenantId);
    expect(await batches().get(tenantId, full.id)).toEqual(full);
    expect(await batches().get(tenantId, sparse.id)).toEqual(sparse);
    expect(await batches().get(`t-${uid()}`, full.id)).toBeNull();
    expect(await batches().get(tenantId, 'batch_missing')).toBeNull();
  });

  it('lists a tenant’s batches of one dialect newest first, a page at a time', async () => {
    const tenantId = `t-${uid()}`;
    const at = (ms: number) => ({ createdAt: new Date(CREATED + ms) });
    // Two made in the same millisecond: the later id comes first.
    const mine = [
      await created(tenantId, at(0)),
      await created(tenantId, at(5)),
      await created(tenantId, at(5)),
      await created(tenantId, at(9)),
      await created(tenantId, at(20)),
    ];
    const anthropic = await created(tenantId, { ...at(30), dialect: 'anthropic', id: nextId('msgbatch_') });
    await created(`t-${uid()}`, at(40));
    const newestFirst = [mine[4], mine[3], mine[2], mine[1], mine[0]].map((b) => b?.id);

    const ids = (page: { batches: StoredBatch[]; hasMore: boolean }) => ({ ids: page.batches.map((b) => b.id), hasMore: page.hasMore });
    const page = (after: string | null, limit: number) => batches().list(tenantId, { dialect: 'openai', after, limit }).then(ids);
    expect(await page(null, 10)).toEqual({ ids: newestFirst, hasMore: false });
    expect(await page(null, 2)).toEqual({ ids: newestFirst.slice(0, 2), hasMore: true });
    expect(await page(newestFirst[1] ?? null, 2)).toEqual({ ids: newestFirst.slice(2, 4), hasMore: true });
    expect(await page(newestFirst[3] ?? null, 2)).toEqual({ ids: newestFirst.slice(4), hasMore: false });
    expect(await page(newestFirst[4] ?? null, 2)).toEqual({ ids: [], hasMore: false });
    expect(await page(null, 5)).toEqual({ ids: newestFirst, hasMore: false });
    // A cursor that is no batch of the tenant's (nor of the dialect) starts nothing.
    expect(await page('batch_missing', 2)).toEqual({ ids: [], hasMore: false });
    expect(await page(anthropic.id, 2)).toEqual({ ids: [], hasMore: false });
    // Before a batch: the nearest newer ones, still newest first.
    const back = (before: string, limit: number) => batches().list(tenantId, { dialect: 'openai', after: null, before, limit }).then(ids);
    expect(await back(newestFirst[3] as string, 2)).toEqual({ ids: newestFirst.slice(1, 3), hasMore: true });
    expect(await back(newestFirst[3] as string, 5)).toEqual({ ids: newestFirst.slice(0, 3), hasMore: false });
    expect(await back(newestFirst[0] as string, 2)).toEqual({ ids: [], hasMore: false });
    expect(await back('batch_missing', 2)).toEqual({ ids: [], hasMore: false });

    const listed = await batches().list(tenantId, { dialect: 'anthropic', after: null, limit: 10 });
    expect(listed).toEqual({ batches: [anthropic], hasMore: false });
    expect(await batches().list(`t-${uid()}`, { dialect: 'openai', after: null, limit: 10 })).toEqual({ batches: [], hasMore: false });
  });

  it('transitions a batch only from the statuses given, so that of two movers one does', async () => {
    const tenantId = `t-${uid()}`;
    const b = await created(tenantId, { feature: 'kept', metadata: { run: '1' } });
    const started = {
      status: 'in_progress' as const,
      inProgressAt: new Date(CREATED + 1_000),
      total: 3,
      segments: [{ firstLine: 0, lines: 3, offset: 0 }],
      // Given as undefined: left as it is.
      feature: undefined,
    };
    const moved = await batches().transition(tenantId, b.id, ['validating'], started);
    const { feature: _undefined, ...set } = started;
    expect(moved).toEqual({ ...b, ...set });
    expect(await batches().get(tenantId, b.id)).toEqual(moved);
    expect(await batches().transition(tenantId, b.id, ['validating'], { status: 'failed', failedAt: new Date() })).toBeNull();
    expect(await batches().transition(`t-${uid()}`, b.id, ['in_progress'], { status: 'cancelling' })).toBeNull();
    expect(await batches().transition(tenantId, 'batch_missing', ['in_progress'], { status: 'cancelling' })).toBeNull();
    expect(await batches().get(tenantId, b.id)).toEqual(moved);

    const ended = {
      status: 'completed' as const,
      completedAt: new Date(CREATED + 9_000),
      usage: usage(3),
      outputFileId: `file-${uid()}`,
      errors: [{ code: 'late', message: 'A late finding.', param: null, line: 2 }],
      metadata: null,
    };
    expect(await batches().transition(tenantId, b.id, ['in_progress', 'finalizing'], ended)).toEqual({ ...moved, ...ended });
    // No change: the batch as it is, only while in one of the statuses.
    expect(await batches().transition(tenantId, b.id, ['completed'], {})).toEqual({ ...moved, ...ended });
    expect(await batches().transition(tenantId, b.id, ['in_progress'], {})).toBeNull();
  });

  it('lists the batches not final of every tenant by id, a page at a time', async () => {
    const prefix = `batch_active_${uid()}_`;
    const [t1, t2] = [`t-${uid()}`, `t-${uid()}`];
    // One batch of each status, made out of id order, over two tenants.
    const all = BATCH_STATUSES.map((status, i) => batch(i % 2 === 0 ? t1 : t2, { id: `${prefix}${i}`, status }));
    for (const b of [...all].reverse()) await batches().create(b);
    const active = all.filter((b) => ['validating', 'in_progress', 'finalizing', 'cancelling'].includes(b.status));

    /** Pages of two from the prefix on, up to the first id past it (other cases' batches share the table). */
    async function pages(): Promise<StoredBatch[][]> {
      const found: StoredBatch[][] = [];
      let after = prefix;
      for (;;) {
        const page = await batches().listActive(2, after);
        expect(page.length).toBeLessThanOrEqual(2);
        const ours = page.filter((b) => b.id.startsWith(prefix));
        if (ours.length > 0) found.push(ours);
        const last = page.at(-1);
        if (!last || ours.length < page.length) return found;
        after = last.id;
      }
    }
    expect(await pages()).toEqual([active.slice(0, 2), active.slice(2, 4)]);
    expect(new Set(active.map((b) => b.tenantId))).toEqual(new Set([t1, t2]));

    const [first] = active;
    if (!first) throw new Error('no active batch');
    await batches().transition(first.tenantId, first.id, [first.status], { status: 'failed', failedAt: new Date(CREATED + 1) });
    expect((await pages()).flat().map((b) => b.id)).toEqual(active.slice(1).map((b) => b.id));
  });

  it('keeps the first result of each line and reads them in order of line', async () => {
    const tenantId = `t-${uid()}`;
    const b = await created(tenantId, { status: 'in_progress', total: 8 });
    const [r0, r2, r3, r5, r7] = [result(b, 0), result(b, 2), result(b, 3, { status: 'failed', statusCode: 429, usage: usage(0) }), result(b, 5), result(b, 7)];
    await batches().insertResults([]);
    await batches().insertResults([r5, r0, r2]);
    // A re-run line and the outbox's redelivery: the first result stays, in another call or in the same one.
    await batches().insertResults([result(b, 2, { body: '{"second":true}' }), r3]);
    await batches().insertResults([r7, result(b, 7, { body: '{"second":true}' }), r0]);

    expect(await batches().doneLines(tenantId, b.id, 0, 8)).toEqual([0, 2, 3, 5, 7]);
    expect(await batches().doneLines(tenantId, b.id, 2, 5)).toEqual([2, 3]);
    expect(await batches().doneLines(tenantId, b.id, 6, 7)).toEqual([]);
    expect(await batches().doneLines(`t-${uid()}`, b.id, 0, 8)).toEqual([]);

    expect(await batches().readResults(tenantId, b.id, -1, 2)).toEqual([r0, r2]);
    expect(await batches().readResults(tenantId, b.id, 2, 2)).toEqual([r3, r5]);
    expect(await batches().readResults(tenantId, b.id, 4, 10)).toEqual([r5, r7]);
    expect(await batches().readResults(tenantId, b.id, 7, 10)).toEqual([]);
    expect(await batches().readResults(`t-${uid()}`, b.id, -1, 10)).toEqual([]);
  });

  it('counts a batch’s results by status, and the failed that never ran, and sums their usage', async () => {
    const tenantId = `t-${uid()}`;
    const [b, other] = [await created(tenantId, { status: 'in_progress' }), await created(tenantId, { status: 'in_progress' })];
    const zero = { succeeded: 0, failed: 0, neverRan: 0, usage: usage(0) };
    expect(await batches().progress(tenantId, b.id)).toEqual(zero);

    // Enough lines for more than one statement's worth.
    // Of the failed, every fifth never ran (status code 0: the batch expired or was cancelled first).
    const lines = Array.from({ length: 4_500 }, (_, line) =>
      result(b, line, line % 3 === 0 ? { status: 'failed', statusCode: line % 5 === 0 ? 0 : 400, usage: usage(0) } : { usage: usage(1) }),
    );
    await batches().insertResults(lines);
    await batches().insertResults([result(other, 0, { usage: usage(100) })]);
    expect(await batches().progress(tenantId, b.id)).toEqual({ succeeded: 3_000, failed: 1_500, neverRan: 300, usage: usage(3_000) });
    expect(await batches().progress(tenantId, other.id)).toEqual({ succeeded: 1, failed: 0, neverRan: 0, usage: usage(100) });
    expect(await batches().progress(`t-${uid()}`, b.id)).toEqual(zero);
    expect(await batches().doneLines(tenantId, b.id, 1_990, 2_010)).toEqual(Array.from({ length: 20 }, (_, i) => 1_990 + i));
  });

  it('deletes a batch with its results, only under its tenant', async () => {
    const tenantId = `t-${uid()}`;
    const [b, kept] = [await created(tenantId, { status: 'completed' }), await created(tenantId, { status: 'completed' })];
    await batches().insertResults([result(b, 0), result(b, 1), result(kept, 0)]);

    expect(await batches().delete(`t-${uid()}`, b.id)).toBe(false);
    expect(await batches().get(tenantId, b.id)).toEqual(b);
    expect(await batches().delete(tenantId, b.id)).toBe(true);
    expect(await batches().get(tenantId, b.id)).toBeNull();
    expect(await batches().readResults(tenantId, b.id, -1, 10)).toEqual([]);
    expect(await batches().progress(tenantId, b.id)).toEqual({ succeeded: 0, failed: 0, neverRan: 0, usage: usage(0) });
    expect(await batches().delete(tenantId, b.id)).toBe(false);

    expect(await batches().get(tenantId, kept.id)).toEqual(kept);
    expect(await batches().doneLines(tenantId, kept.id, 0, 10)).toEqual([0]);
  });

  it("knows the files an unfinished batch reads, which the files' sweep keeps until the batch has ended", async () => {
    const tenantId = `t-${uid()}`;
    const files = store.repo().files;
    async function* content() {
      yield Buffer.from('{"custom_id":"a"}\n');
    }
    const input = await files.create(
      { id: `file-${uid()}`, tenantId, purpose: 'batch', filename: 'in.jsonl', createdAt: new Date(), expiresAt: new Date(Date.now() - 1000) },
      content(),
    );
    const running = await created(tenantId, { inputFileId: input.id, status: 'in_progress' });
    expect(await batches().readsFile(tenantId, input.id)).toBe(true);
    expect(await batches().readsFile(`t-${uid()}`, input.id)).toBe(false);
    await files.sweep(new Date(), 1000);
    expect((await files.read(tenantId, input.id)[Symbol.asyncIterator]().next()).done).toBe(false);
    await batches().transition(tenantId, running.id, ['in_progress'], { status: 'completed', completedAt: new Date() });
    expect(await batches().readsFile(tenantId, input.id)).toBe(false);
    await files.sweep(new Date(), 1000);
    expect((await files.read(tenantId, input.id)[Symbol.asyncIterator]().next()).done).toBe(true);
  });
}
