/** Contract cases of FileRepository: streamed writes in chunks, reads from an offset, pages, isolation, deletion and the sweep. */
import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import type { FilePurpose, StoredFile } from '../../../src/infra/store/repository.ts';
import { uid, type StoreContext } from './context.ts';

const MIB = 1024 * 1024;
const HOUR_MS = 3_600_000;

type NewFile = Omit<StoredFile, 'bytes' | 'lines'>;

function newFile(tenantId: string, fields: Partial<NewFile> = {}): NewFile {
  return { id: `file-${uid()}${uid()}`, tenantId, purpose: 'batch', filename: 'input.jsonl', createdAt: new Date(), expiresAt: null, ...fields };
}

/** `bytes` cut into pieces of `size` (the last shorter), as a request body arrives. */
async function* pieces(bytes: Uint8Array, size: number): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}

/** Everything `read` yields, with the largest piece it yielded. */
async function readAll(content: AsyncIterable<Uint8Array>): Promise<{ bytes: Buffer; largest: number }> {
  const parts: Uint8Array[] = [];
  for await (const part of content) parts.push(part);
  return { bytes: Buffer.concat(parts), largest: Math.max(0, ...parts.map((part) => part.length)) };
}

/** Registers the cases on a store. */
export function fileCases(store: StoreContext): void {
  const files = () => store.repo().files;
  const text = (value: string) => pieces(Buffer.from(value), 7);

  it('stores a file with its bytes and lines counted, and shows it to its tenant only', async () => {
    const tenantId = `t-${uid()}`;
    const file = newFile(tenantId, { purpose: 'user_data', filename: 'notes ü.txt', expiresAt: new Date(Date.now() + HOUR_MS) });
    const created = await files().create(file, text('{"a":1}\n{"b":2}\n'));
    expect(created).toEqual({ ...file, bytes: 16, lines: 2 });
    expect(await files().get(tenantId, file.id)).toEqual(created);
    expect(await files().get(`t-${uid()}`, file.id)).toBeNull();
    expect(await files().get(tenantId, 'file-missing')).toBeNull();
    expect((await readAll(files().read(`t-${uid()}`, file.id))).bytes.length).toBe(0);
  });

  it('counts a last line without its newline, and none in an empty file', async () => {
    const tenantId = `t-${uid()}`;
    for (const [content, lines] of [
      ['', 0],
      ['a', 1],
      ['a\n', 1],
      ['a\nb', 2],
      ['\n\n', 2],
    ] as const) {
      const created = await files().create(newFile(tenantId), text(content));
      expect(created, JSON.stringify(content)).toMatchObject({ bytes: Buffer.byteLength(content), lines });
    }
  });

  it('reads a file of several chunks whole, and from any offset, a chunk at most at a time', async () => {
    const tenantId = `t-${uid()}`;
    const bytes = randomBytes(2.5 * MIB);
    const file = newFile(tenantId, { purpose: 'user_data' });
    // Pieces that fit no chunk boundary.
    await files().create(file, pieces(bytes, 300_007));
    const whole = await readAll(files().read(tenantId, file.id));
    expect(whole.bytes.equals(bytes)).toBe(true);
    expect(whole.largest).toBeLessThanOrEqual(MIB);
    for (const offset of [1, MIB - 1, MIB, MIB + 5, 2 * MIB + 10, bytes.length - 1]) {
      const tail = await readAll(files().read(tenantId, file.id, offset));
      expect(tail.bytes.equals(bytes.subarray(offset)), `from ${offset}`).toBe(true);
    }
    expect((await readAll(files().read(tenantId, file.id, bytes.length))).bytes.length).toBe(0);
  });

  it('reads a file from an offset up to an end (exclusive), a chunk at most at a time', async () => {
    const tenantId = `t-${uid()}`;
    const bytes = randomBytes(2.5 * MIB);
    const file = newFile(tenantId, { purpose: 'user_data' });
    await files().create(file, pieces(bytes, 300_007));
    for (const [offset, end] of [
      [0, 10],
      [5, MIB],
      [MIB - 3, MIB + 3],
      [MIB, 2 * MIB],
      [10, 2 * MIB + 7],
      [2 * MIB + 1, bytes.length + 100],
    ] as const) {
      const range = await readAll(files().read(tenantId, file.id, offset, end));
      expect(range.bytes.equals(bytes.subarray(offset, end)), `${offset} to ${end}`).toBe(true);
      expect(range.largest).toBeLessThanOrEqual(MIB);
    }
    expect((await readAll(files().read(tenantId, file.id, 7, 7))).bytes.length).toBe(0);
  });

  it('keeps nothing of a file whose content throws, and rethrows', async () => {
    const tenantId = `t-${uid()}`;
    const file = newFile(tenantId);
    const failure = new Error('client gone');
    async function* failing(): AsyncGenerator<Uint8Array> {
      yield randomBytes(1.5 * MIB);
      throw failure;
    }
    await expect(files().create(file, failing())).rejects.toBe(failure);
    expect(await files().get(tenantId, file.id)).toBeNull();
    expect((await files().list(tenantId, { after: null, limit: 10, order: 'desc' })).files).toEqual([]);
    expect((await readAll(files().read(tenantId, file.id))).bytes.length).toBe(0);
    // The id is free again.
    expect(await files().create(file, text('again\n'))).toMatchObject({ id: file.id, bytes: 6, lines: 1 });
  });

  it('shows a file only once all of it is stored', async () => {
    const tenantId = `t-${uid()}`;
    const file = newFile(tenantId);
    const held = Promise.withResolvers<void>();
    const halfway = Promise.withResolvers<void>();
    async function* slow(): AsyncGenerator<Uint8Array> {
      yield randomBytes(1.5 * MIB);
      halfway.resolve();
      await held.promise;
      yield Buffer.from('end\n');
    }
    const creating = files().create(file, slow());
    await halfway.promise;
    expect(await files().get(tenantId, file.id)).toBeNull();
    expect((await files().list(tenantId, { after: null, limit: 10, order: 'asc' })).files).toEqual([]);
    held.resolve();
    expect((await creating).bytes).toBe(1.5 * MIB + 4);
    expect(await files().get(tenantId, file.id)).not.toBeNull();
  });

  it('takes the purpose and expiry as they stand when the content ends', async () => {
    const tenantId = `t-${uid()}`;
    const file = newFile(tenantId, { purpose: 'user_data' });
    const expiresAt = new Date(Date.now() + HOUR_MS);
    async function* formOrder(): AsyncGenerator<Uint8Array> {
      yield Buffer.from('{"custom_id":"1"}\n');
      // The form's fields after its file.
      file.purpose = 'batch';
      file.expiresAt = expiresAt;
    }
    const created = await files().create(file, formOrder());
    expect(created).toMatchObject({ purpose: 'batch', expiresAt });
    expect(await files().get(tenantId, file.id)).toMatchObject({ purpose: 'batch', expiresAt });
  });

  it('leaves an id already stored as it is, and returns its record', async () => {
    const tenantId = `t-${uid()}`;
    const file = newFile(tenantId);
    const first = await files().create(file, text('first\n'));
    const again = await files().create({ ...file, purpose: 'vision' }, text('second, longer\n'));
    expect(again).toEqual(first);
    expect((await readAll(files().read(tenantId, file.id))).bytes.toString()).toBe('first\n');
  });

  it('pages a tenant’s files by creation, either way, of one purpose or all', async () => {
    const tenantId = `t-${uid()}`;
    const start = Date.now() - HOUR_MS;
    const purposes: FilePurpose[] = ['batch', 'user_data', 'batch', 'batch_output', 'batch'];
    const made: StoredFile[] = [];
    for (const [i, purpose] of purposes.entries()) {
      made.push(await files().create(newFile(tenantId, { purpose, createdAt: new Date(start + i * 1000) }), text(`${i}\n`)));
    }
    await files().create(newFile(`t-${uid()}`), text('other tenant\n'));
    const ids = (page: { files: StoredFile[] }) => page.files.map((file) => file.id);
    const at = (...indexes: number[]) => indexes.map((i) => (made[i] as StoredFile).id);

    const first = await files().list(tenantId, { after: null, limit: 2, order: 'desc' });
    expect(ids(first)).toEqual(at(4, 3));
    expect(first.hasMore).toBe(true);
    const second = await files().list(tenantId, { after: at(3)[0] as string, limit: 2, order: 'desc' });
    expect(ids(second)).toEqual(at(2, 1));
    const last = await files().list(tenantId, { after: at(1)[0] as string, limit: 2, order: 'desc' });
    expect(ids(last)).toEqual(at(0));
    expect(last.hasMore).toBe(false);
    expect(ids(await files().list(tenantId, { after: null, limit: 10, order: 'asc' }))).toEqual(at(0, 1, 2, 3, 4));
    expect(ids(await files().list(tenantId, { after: at(1)[0] as string, limit: 10, order: 'asc' }))).toEqual(at(2, 3, 4));
    const batches = await files().list(tenantId, { purpose: 'batch', after: null, limit: 2, order: 'asc' });
    expect(ids(batches)).toEqual(at(0, 2));
    expect(batches.hasMore).toBe(true);
    expect(ids(await files().list(tenantId, { purpose: 'batch', after: at(2)[0] as string, limit: 2, order: 'asc' }))).toEqual(at(4));
    expect((await files().list(tenantId, { after: 'file-unknown', limit: 10, order: 'desc' })).files).toEqual([]);
    expect(await files().list(`t-${uid()}`, { after: null, limit: 10, order: 'desc' })).toEqual({ files: [], hasMore: false });
  });

  it('deletes a file and its bytes, and not another tenant’s', async () => {
    const tenantId = `t-${uid()}`;
    const file = newFile(tenantId);
    await files().create(file, pieces(randomBytes(1.2 * MIB), 65_536));
    expect(await files().delete(`t-${uid()}`, file.id)).toBe(false);
    expect(await files().get(tenantId, file.id)).not.toBeNull();
    expect(await files().delete(tenantId, file.id)).toBe(true);
    expect(await files().get(tenantId, file.id)).toBeNull();
    expect((await readAll(files().read(tenantId, file.id))).bytes.length).toBe(0);
    expect(await files().delete(tenantId, file.id)).toBe(false);
  });

  it('hides an expired file from clients, and sweeps files past their expiry, at most `limit`', async () => {
    const tenantId = `t-${uid()}`;
    const now = Date.now();
    const expired = await files().create(newFile(tenantId, { expiresAt: new Date(now - 1000) }), text('old\n'));
    expect(await files().get(tenantId, expired.id)).toBeNull();
    // Hidden from clients, but read whole until swept: a batch that reads it may still run.
    expect((await readAll(files().read(tenantId, expired.id))).bytes.toString()).toBe('old\n');
    expect((await files().list(tenantId, { after: null, limit: 10, order: 'desc' })).files).toEqual([]);

    const soon = await files().create(newFile(tenantId, { expiresAt: new Date(now + HOUR_MS) }), text('soon\n'));
    const kept = await files().create(newFile(tenantId), text('kept\n'));
    expect(await files().sweep(new Date(now), 1)).toBe(1);
    expect(await files().sweep(new Date(now + 2 * HOUR_MS), 1000)).toBeGreaterThanOrEqual(1);
    expect(await files().get(tenantId, soon.id)).toBeNull();
    expect(await files().delete(tenantId, expired.id)).toBe(false);
    expect(await files().get(tenantId, kept.id)).toEqual(kept);
  });
}
