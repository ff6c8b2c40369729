/** Contract cases of ResponseRepository: the replace rules, tombstones, input pages, items by id, the reaper's list and the sweep. */
import { expect, it } from 'vitest';
import type { ResponseStatus, StoredItem, StoredResponse } from '../../../src/infra/store/repository.ts';
import { uid, type StoreContext } from './context.ts';

const DAY_MS = 86_400_000;

const message = (id: string, text: string): StoredItem => ({ id, type: 'message', role: 'user', content: [{ type: 'input_text', text }] });
const answer = (id: string, text: string): StoredItem => ({
  id,
  type: 'message',
  role: 'assistant',
  status: 'completed',
  content: [{ type: 'output_text', text, annotations: [] }],
});

/** A stored response of `tenantId` with the given status, input and output; `overrides` picks the rest. */
function stored(
  tenantId: string,
  status: ResponseStatus,
  parts: { id?: string; input?: StoredItem[]; output?: StoredItem[] } = {},
  overrides: Partial<StoredResponse> = {},
): StoredResponse {
  const id = parts.id ?? `resp_${uid()}${uid()}`;
  const createdAt = overrides.createdAt ?? new Date();
  return {
    id,
    tenantId,
    status,
    background: false,
    response: {
      id,
      object: 'response',
      created_at: Math.floor(createdAt.getTime() / 1000),
      status,
      model: 'fake-gpt',
      output: parts.output ?? [],
      metadata: { 'team.name': 'search', $ref: '#/x' },
    },
    input: parts.input ?? [message(`msg_${uid()}`, 'hello')],
    previousResponseId: null,
    createdAt,
    expiresAt: null,
    ...overrides,
  };
}

const ids = (items: StoredItem[]) => items.map((item) => item.id);

/** Registers the cases on a store. */
export function responseCases(store: StoreContext): void {
  const responses = () => store.repo().responses;

  it('round-trips a response, its Response object and input exactly; no other tenant sees it', async () => {
    const tenantId = `t-${uid()}`;
    const input = [message('msg_a', 'first'), { id: 'fc_1', type: 'function_call_output', call_id: 'call_1', output: 'nul \u0000 and ünïcødé' }];
    const record = stored(
      tenantId,
      'completed',
      { input, output: [answer('msg_out', 'done')] },
      { background: true, previousResponseId: 'resp_before', createdAt: new Date(Date.now() - 5_000), expiresAt: new Date(Date.now() + 3_600_000) },
    );
    await responses().put([record]);
    const got = await responses().get(tenantId, record.id);
    // PostgreSQL text cannot hold U+0000; it comes back as U+FFFD wherever the store cannot keep it.
    const nul = String(got?.input[1]?.output);
    expect(['nul \u0000 and ünïcødé', 'nul \ufffd and ünïcødé']).toContain(nul);
    expect(got).toEqual({ ...record, input: [input[0], { ...input[1], output: nul }] });
    expect(await responses().get(`t-${uid()}`, record.id)).toBeNull();
    expect(await responses().get(tenantId, 'resp_missing')).toBeNull();
  });

  it('the first final record stays; one not final replaces only one not final', async () => {
    const tenantId = `t-${uid()}`;
    const id = `resp_${uid()}`;
    const put = (status: ResponseStatus, text: string) =>
      responses().put([stored(tenantId, status, { id, input: [message(`msg_${text}`, text)], output: [answer(`out_${text}`, text)] })]);
    const current = async () => {
      const got = await responses().get(tenantId, id);
      return got && { status: got.status, input: ids(got.input), output: ids(got.response.output as StoredItem[]) };
    };
    await put('queued', 'q');
    await put('in_progress', 'p');
    expect(await current()).toEqual({ status: 'in_progress', input: ['msg_p'], output: ['out_p'] });
    await put('queued', 'late');
    expect(await current()).toEqual({ status: 'queued', input: ['msg_late'], output: ['out_late'] });
    await put('completed', 'c');
    await put('queued', 'after');
    await put('in_progress', 'after');
    expect(await current()).toEqual({ status: 'completed', input: ['msg_c'], output: ['out_c'] });
    // A second end (a reaper's failure after a worker's answer, or the other way round) changes nothing.
    await put('cancelled', 'x');
    await put('failed', 'f');
    expect(await current()).toEqual({ status: 'completed', input: ['msg_c'], output: ['out_c'] });
    // The items a refused or replaced record carried are not findable.
    const found = await responses().findItems(tenantId, ['msg_q', 'msg_p', 'out_c', 'msg_after', 'out_after', 'msg_x', 'out_x']);
    expect([...found.keys()].sort()).toEqual(['out_c']);
  });

  it('applies the rules within one batch, in its order, whatever other ids it holds', async () => {
    const tenantId = `t-${uid()}`;
    const [a, b, c] = [`resp_a${uid()}`, `resp_b${uid()}`, `resp_c${uid()}`];
    await responses().put([
      stored(tenantId, 'queued', { id: b }),
      stored(tenantId, 'completed', { id: a }),
      stored(tenantId, 'in_progress', { id: b }),
      stored(tenantId, 'queued', { id: a }),
      stored(tenantId, 'incomplete', { id: c }),
      stored(tenantId, 'failed', { id: c }),
    ]);
    expect((await responses().get(tenantId, a))?.status).toBe('completed');
    expect((await responses().get(tenantId, b))?.status).toBe('in_progress');
    expect((await responses().get(tenantId, c))?.status).toBe('incomplete');
    await responses().put([]);
  });

  it('keeps the final record and only its items when many puts of one id race', async () => {
    const tenantId = `t-${uid()}`;
    const id = `resp_${uid()}`;
    const record = (status: ResponseStatus, n: number) =>
      stored(tenantId, status, {
        id,
        input: [message(`in_${status}_${n}`, 'x'), message(`in2_${status}_${n}`, 'y')],
        output: [answer(`out_${status}_${n}`, 'z')],
      });
    const writes = Array.from({ length: 12 }, (_, n) => responses().put([record(n === 7 ? 'completed' : n % 2 ? 'queued' : 'in_progress', n)]));
    await Promise.all(writes);
    const got = await responses().get(tenantId, id);
    expect(got?.status).toBe('completed');
    expect(ids(got?.input ?? [])).toEqual(['in_completed_7', 'in2_completed_7']);
    const everyId = Array.from({ length: 12 }, (_, n) => [`in_queued_${n}`, `in_in_progress_${n}`, `out_queued_${n}`, `out_in_progress_${n}`]).flat();
    expect((await responses().findItems(tenantId, everyId)).size).toBe(0);
    expect([...(await responses().findItems(tenantId, ['in_completed_7', 'out_completed_7'])).keys()].sort()).toEqual(['in_completed_7', 'out_completed_7']);
  });

  it('deletes a response for good: gone with its items, its id never recorded again', async () => {
    const tenantId = `t-${uid()}`;
    const record = stored(
      tenantId,
      'in_progress',
      { input: [message('msg_secret', 'my secret')], output: [answer('out_secret', 'the answer')] },
      { background: true },
    );
    await responses().put([record]);
    expect(await responses().delete(`t-${uid()}`, record.id)).toBe(false);
    expect(await responses().get(tenantId, record.id)).not.toBeNull();
    expect(await responses().delete(tenantId, record.id)).toBe(true);
    expect(await responses().get(tenantId, record.id)).toBeNull();
    expect(await responses().listInput(tenantId, record.id, { after: null, limit: 10, order: 'asc' })).toBeNull();
    expect((await responses().findItems(tenantId, ['msg_secret', 'out_secret'])).size).toBe(0);
    expect(await responses().listUnfinished(new Date(Date.now() + 60_000), 10_000)).not.toContainEqual({ tenantId, id: record.id });
    // A late write of its worker, final or not, does not bring it back.
    await responses().put([{ ...record, status: 'completed' }]);
    await responses().put([{ ...record, status: 'queued' }]);
    expect(await responses().get(tenantId, record.id)).toBeNull();
    expect((await responses().findItems(tenantId, ['msg_secret'])).size).toBe(0);
    expect(await responses().delete(tenantId, record.id)).toBe(false);
    expect(await responses().delete(tenantId, 'resp_never_was')).toBe(false);
    // Deleted while the outbox still carried it (Redis knew it): its later write does not create it.
    const late = stored(tenantId, 'completed', { output: [answer('out_late', 'late')] });
    expect(await responses().delete(tenantId, late.id, true)).toBe(false);
    await responses().put([late]);
    expect(await responses().get(tenantId, late.id)).toBeNull();
    expect((await responses().findItems(tenantId, ['out_late'])).size).toBe(0);
    // Without `known`, an id the store never had leaves nothing behind.
    const unknown = stored(tenantId, 'completed');
    expect(await responses().delete(tenantId, unknown.id)).toBe(false);
    await responses().put([unknown]);
    expect(await responses().get(tenantId, unknown.id)).not.toBeNull();
  });

  it('keeps deleted a response whose first write and deletion race (the outbox carrying it as the client deletes it)', async () => {
    const tenantId = `t-${uid()}`;
    const outputIds = Array.from({ length: 40 }, (_, index) => `out_race_${index}_${uid()}`);
    const racing = outputIds.map((outputId) => stored(tenantId, 'completed', { output: [answer(outputId, 'x')] }));
    // Each pair starts together: the put's insert may be in flight, not yet committed, while the delete looks.
    await Promise.all(racing.flatMap((record) => [responses().put([record]), responses().delete(tenantId, record.id, true)]));
    for (const record of racing) expect(await responses().get(tenantId, record.id), record.id).toBeNull();
    expect((await responses().findItems(tenantId, outputIds)).size).toBe(0);
  });

  it('pages input items by position, both orders, after an item, with has-more', async () => {
    const tenantId = `t-${uid()}`;
    const input = ['i0', 'i1', 'i2', 'i3', 'i4'].map((id) => message(id, id));
    const record = stored(tenantId, 'completed', { input, output: [answer('o0', 'out')] });
    await responses().put([record]);
    const page = (after: string | null, limit: number, order: 'asc' | 'desc') =>
      responses()
        .listInput(tenantId, record.id, { after, limit, order })
        .then((p) => p && { items: ids(p.items), hasMore: p.hasMore });
    expect(await page(null, 2, 'asc')).toEqual({ items: ['i0', 'i1'], hasMore: true });
    expect(await page('i1', 2, 'asc')).toEqual({ items: ['i2', 'i3'], hasMore: true });
    expect(await page('i3', 2, 'asc')).toEqual({ items: ['i4'], hasMore: false });
    expect(await page('i2', 2, 'asc')).toEqual({ items: ['i3', 'i4'], hasMore: false });
    expect(await page(null, 2, 'desc')).toEqual({ items: ['i4', 'i3'], hasMore: true });
    expect(await page('i3', 2, 'desc')).toEqual({ items: ['i2', 'i1'], hasMore: true });
    expect(await page('i1', 2, 'desc')).toEqual({ items: ['i0'], hasMore: false });
    expect(await page(null, 100, 'asc')).toEqual({ items: ['i0', 'i1', 'i2', 'i3', 'i4'], hasMore: false });
    expect(await page('i4', 3, 'asc')).toEqual({ items: [], hasMore: false });
    // Output items are not input; an unknown `after` is an empty page.
    expect(await page('o0', 3, 'asc')).toEqual({ items: [], hasMore: false });
    expect(await page('nope', 3, 'asc')).toEqual({ items: [], hasMore: false });
    expect((await responses().listInput(tenantId, record.id, { after: null, limit: 2, order: 'asc' }))?.items[0]).toEqual(input[0]);
    expect(await responses().listInput(`t-${uid()}`, record.id, { after: null, limit: 2, order: 'asc' })).toBeNull();
    expect(await responses().listInput(tenantId, 'resp_missing', { after: null, limit: 2, order: 'asc' })).toBeNull();
    const empty = stored(tenantId, 'completed', { input: [] });
    await responses().put([empty]);
    expect(await responses().listInput(tenantId, empty.id, { after: null, limit: 2, order: 'desc' })).toEqual({ items: [], hasMore: false });
  });

  it('finds input and output items by id across the tenant’s responses, never another tenant’s', async () => {
    const [tenantId, other] = [`t-${uid()}`, `t-${uid()}`];
    const first = stored(tenantId, 'completed', {
      input: [message('msg_q1', 'question one')],
      output: [answer('msg_a1', 'answer one'), { type: 'no_id' }] as StoredItem[],
    });
    const second = stored(tenantId, 'completed', { input: [message('msg_q2', 'question two')], output: [answer('msg_a2', 'answer two')] });
    // Another tenant with items of the same ids and of its own.
    const theirs = stored(other, 'completed', { input: [message('msg_q1', 'THEIR question')], output: [answer('msg_theirs', 'their answer')] });
    await responses().put([first, second, theirs]);
    const found = await responses().findItems(tenantId, ['msg_q1', 'msg_a1', 'msg_q2', 'msg_a2', 'msg_theirs', 'msg_none']);
    expect(Object.fromEntries(found)).toEqual({
      msg_q1: message('msg_q1', 'question one'),
      msg_a1: answer('msg_a1', 'answer one'),
      msg_q2: message('msg_q2', 'question two'),
      msg_a2: answer('msg_a2', 'answer two'),
    });
    expect(Object.fromEntries(await responses().findItems(other, ['msg_q1', 'msg_a1']))).toEqual({ msg_q1: message('msg_q1', 'THEIR question') });
    expect((await responses().findItems(tenantId, [])).size).toBe(0);
  });

  it('finds an output item sent back as input once, as the model made it', async () => {
    const tenantId = `t-${uid()}`;
    const first = stored(tenantId, 'completed', { output: [answer('msg_out', 'original')] }, { createdAt: new Date(Date.now() - 1000) });
    const resent = { ...answer('msg_out', 'original'), status: 'resent' };
    const second = stored(tenantId, 'completed', { input: [resent] });
    await responses().put([first, second]);
    expect((await responses().findItems(tenantId, ['msg_out', 'msg_out'])).get('msg_out')).toEqual(answer('msg_out', 'original'));
  });

  it('lists unfinished background responses created before a time, oldest first, up to a limit', async () => {
    const tenantId = `t-${uid()}`;
    // Far in the past, so that no other case's responses come first.
    const at = (minutes: number) => new Date(Date.UTC(2001, 0, 1) + minutes * 60_000);
    const background = { background: true };
    const oldest = stored(tenantId, 'queued', {}, { ...background, createdAt: at(1) });
    const running = stored(tenantId, 'in_progress', {}, { ...background, createdAt: at(2) });
    const third = stored(tenantId, 'queued', {}, { ...background, createdAt: at(3) });
    const finished = stored(tenantId, 'completed', {}, { ...background, createdAt: at(0) });
    const foreground = stored(tenantId, 'in_progress', {}, { createdAt: at(0) });
    const deleted = stored(tenantId, 'queued', {}, { ...background, createdAt: at(0) });
    const later = stored(tenantId, 'queued', {}, { ...background, createdAt: at(10) });
    await responses().put([oldest, running, third, finished, foreground, deleted, later]);
    await responses().delete(tenantId, deleted.id);
    const mine = (list: Array<{ tenantId: string; id: string }>) => list.filter((entry) => entry.tenantId === tenantId).map((entry) => entry.id);
    expect(mine(await responses().listUnfinished(at(5), 100))).toEqual([oldest.id, running.id, third.id]);
    const page = await responses().listUnfinished(at(5), 2);
    expect(page).toEqual([
      { tenantId, id: oldest.id, createdAt: at(1) },
      { tenantId, id: running.id, createdAt: at(2) },
    ]);
    // The next page starts after the last row of this one.
    expect(mine(await responses().listUnfinished(at(5), 100, page[1]))).toEqual([third.id]);
    expect(mine(await responses().listUnfinished(at(2), 100))).toEqual([oldest.id]);
  });

  it('sweeps expired responses and those past their tenant’s retention, at most `limit` at a time, with their items', async () => {
    const now = new Date();
    const ago = (days: number) => new Date(now.getTime() - days * DAY_MS);
    // Whatever earlier cases left that a sweep now removes.
    while ((await responses().sweep(now, 1000)) > 0);
    const [plain, short, long] = [`t-${uid()}`, `t-${uid()}`, `t-${uid()}`];
    await store.repo().policies.setData({ tenantId: short, storeResponses: true, retentionDays: 7 });
    await store.repo().policies.setData({ tenantId: long, storeResponses: false, retentionDays: 90 });
    const gone = [
      stored(plain, 'completed', { input: [message(`msg_${uid()}`, 'old')] }, { createdAt: ago(31) }),
      stored(short, 'completed', {}, { createdAt: ago(8) }),
      stored(long, 'completed', {}, { createdAt: ago(1), expiresAt: new Date(now.getTime() - 60_000) }),
    ];
    const kept = [
      stored(plain, 'completed', {}, { createdAt: ago(29) }),
      stored(short, 'completed', {}, { createdAt: ago(6) }),
      stored(long, 'completed', {}, { createdAt: ago(31) }),
      stored(plain, 'completed', {}, { createdAt: ago(1), expiresAt: new Date(now.getTime() + 3_600_000) }),
    ];
    await responses().put([...gone, ...kept]);
    expect(await responses().sweep(now, 2)).toBe(2);
    expect(await responses().sweep(now, 2)).toBe(1);
    expect(await responses().sweep(now, 2)).toBe(0);
    for (const record of gone) expect(await responses().get(record.tenantId, record.id)).toBeNull();
    for (const record of kept) expect(await responses().get(record.tenantId, record.id)).not.toBeNull();
    expect((await responses().findItems(plain, ids(gone[0]?.input ?? []))).size).toBe(0);
    // A swept response was not deleted: no tombstone keeps its id.
    const [swept] = gone;
    if (!swept) throw new Error('no swept response');
    await responses().put([swept]);
    expect((await responses().get(plain, swept.id))?.id).toBe(swept.id);
  });

  it('sweeps the id kept of a deleted response only after the longest retention and a day', async () => {
    const tenantId = `t-${uid()}`;
    const record = stored(tenantId, 'completed');
    await responses().put([record]);
    await responses().delete(tenantId, record.id);
    const inDays = (days: number) => new Date(Date.now() + days * DAY_MS);
    // Within the shortest horizon there can be (30 days of the default retention and the day more).
    await responses().sweep(inDays(30), 1000);
    await responses().put([record]);
    expect(await responses().get(tenantId, record.id)).toBeNull();
    // Past any retention a tenant may set (3,650 days) and the day more: the id may be used again.
    await responses().sweep(inDays(3_653), 1000);
    await responses().put([record]);
    expect((await responses().get(tenantId, record.id))?.status).toBe('completed');
  });
}
