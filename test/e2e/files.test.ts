/**
 * OpenAI's Files API with the official `openai` SDK against web and worker processes: upload
 * (the form's fields before or after its file), retrieve, list and its pages, download of a
 * file of several chunks byte for byte, delete, tenant isolation, and the refusals: a purpose a
 * client may not upload, a file past FILE_MAX_BYTES or a batch file past BATCH_MAX_LINES, of
 * which nothing is stored.
 */
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI, { NotFoundError, toFile } from 'openai';
import type { FileObject } from 'openai/resources/files';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { startGateway, type GatewayUnderTest } from '../helpers/gateway-processes.ts';
import { apiFailure } from '../helpers/sdk-calls.ts';
import { testCatalog } from '../helpers/test-catalog.ts';

const MIB = 1024 * 1024;
const MAX_BYTES = 3 * MIB;
const MAX_BATCH_LINES = 5;
const FILE_TTL_S = 7 * 86_400;

let upstream: FakeUpstream;
let gateway: GatewayUnderTest;
let acme: OpenAI;
let acmeKey: string;
let globex: OpenAI;

const client = (secret: string) => new OpenAI({ baseURL: gateway.baseURL, apiKey: secret, maxRetries: 0 });
const jsonl = (lines: number) =>
  Array.from({ length: lines }, (_, i) => `{"custom_id":"r${i}","method":"POST","url":"/v1/chat/completions","body":{}}\n`).join('');

/** A new tenant's client, so that its list holds only what the test made. */
async function freshTenant(): Promise<OpenAI> {
  return client((await gateway.issueKey(`t-${randomBytes(4).toString('hex')}`, 'app')).secret);
}

/** How many rows the store holds, complete or not: what a refused upload must leave unchanged. */
async function storedRows(): Promise<{ files: number; chunks: number }> {
  const db = new Client({ connectionString: gateway.databaseUrl });
  await db.connect();
  try {
    const files = await db.query<{ n: string }>('SELECT count(*) AS n FROM files');
    const chunks = await db.query<{ n: string }>('SELECT count(*) AS n FROM file_chunks');
    return { files: Number(files.rows[0]?.n), chunks: Number(chunks.rows[0]?.n) };
  } finally {
    await db.end();
  }
}

beforeAll(async () => {
  upstream = await startFakeUpstream();
  gateway = await startGateway({
    catalog: testCatalog(upstream.url),
    env: { FILE_MAX_BYTES: String(MAX_BYTES), BATCH_MAX_LINES: String(MAX_BATCH_LINES), FILE_TTL_S: String(FILE_TTL_S) },
  });
  acmeKey = (await gateway.issueKey('acme', 'app')).secret;
  acme = client(acmeKey);
  globex = client((await gateway.issueKey('globex', 'developer')).secret);
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

describe('upload, retrieve, download, delete', () => {
  it('uploads a batch file, which expires after FILE_TTL_S, and retrieves it', async () => {
    const content = jsonl(3);
    const file = await acme.files.create({ file: await toFile(Buffer.from(content), 'input.jsonl'), purpose: 'batch' });
    expect(file).toMatchObject({
      object: 'file',
      bytes: Buffer.byteLength(content),
      filename: 'input.jsonl',
      purpose: 'batch',
      status: 'processed',
      status_details: null,
    });
    expect(file.id).toMatch(/^file-/);
    expect(Math.abs(file.created_at - Date.now() / 1000)).toBeLessThan(60);
    expect(file.expires_at).toBe(file.created_at + FILE_TTL_S);
    expect(await acme.files.retrieve(file.id)).toEqual(file);
  });

  it('takes expires_after, and keeps a file without one until it is deleted', async () => {
    const data = await toFile(Buffer.from('notes'), 'notes.txt');
    const expiring = await acme.files.create({ file: data, purpose: 'user_data', expires_after: { anchor: 'created_at', seconds: 3600 } });
    expect(expiring.expires_at).toBe(expiring.created_at + 3600);
    // The purpose before the file this time: the form's order is the caller's object's.
    const kept = await acme.files.create({ purpose: 'user_data', file: await toFile(Buffer.from('notes'), 'notes.txt') });
    expect(kept.expires_at).toBeNull();
  });

  it('downloads a file of several MiB byte for byte', async () => {
    const bytes = randomBytes(2.5 * MIB);
    const file = await acme.files.create({ file: await toFile(bytes, 'blob.bin'), purpose: 'user_data' });
    expect(file.bytes).toBe(bytes.length);
    const response = await acme.files.content(file.id);
    expect(response.headers.get('content-type')).toBe('application/octet-stream');
    expect(Buffer.from(await response.arrayBuffer()).equals(bytes)).toBe(true);
  });

  it('deletes a file: then it is not found, nor its content', async () => {
    const file = await acme.files.create({ file: await toFile(Buffer.from(jsonl(1)), 'one.jsonl'), purpose: 'batch' });
    expect(await acme.files.delete(file.id)).toEqual({ id: file.id, object: 'file', deleted: true });
    await expect(acme.files.retrieve(file.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(acme.files.content(file.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(acme.files.delete(file.id)).rejects.toBeInstanceOf(NotFoundError);
  });

  it("hides a tenant's file from every other tenant", async () => {
    const file = await acme.files.create({ file: await toFile(Buffer.from('secret'), 'secret.txt'), purpose: 'user_data' });
    for (const attempt of [() => globex.files.retrieve(file.id), () => globex.files.content(file.id), () => globex.files.delete(file.id)]) {
      const error = await apiFailure(attempt());
      expect(error.status).toBe(404);
      expect(error.code).toBe('not_found');
    }
    const listed: string[] = [];
    for await (const seen of globex.files.list()) listed.push(seen.id);
    expect(listed).not.toContain(file.id);
    expect((await acme.files.retrieve(file.id)).id).toBe(file.id);
  });
});

describe('lists', () => {
  it('pages with after, limit, order and purpose, and the SDK pages through them all', async () => {
    const tenant = await freshTenant();
    const made: FileObject[] = [];
    for (const [i, purpose] of (['batch', 'user_data', 'batch', 'user_data', 'batch'] as const).entries()) {
      made.push(await tenant.files.create({ file: await toFile(Buffer.from(jsonl(1)), `f${i}.jsonl`), purpose }));
    }
    const newestFirst = made.map((file) => file.id).reverse();

    const first = await tenant.files.list({ limit: 2 });
    expect(first.data.map((file) => file.id)).toEqual(newestFirst.slice(0, 2));
    expect(first.has_more).toBe(true);
    const second = await tenant.files.list({ limit: 2, after: newestFirst[1] as string });
    expect(second.data.map((file) => file.id)).toEqual(newestFirst.slice(2, 4));

    const all: string[] = [];
    for await (const file of tenant.files.list({ limit: 2 })) all.push(file.id);
    expect(all).toEqual(newestFirst);
    const oldestFirst: string[] = [];
    for await (const file of tenant.files.list({ limit: 2, order: 'asc' })) oldestFirst.push(file.id);
    expect(oldestFirst).toEqual([...newestFirst].reverse());

    const batches = await tenant.files.list({ purpose: 'batch', order: 'asc' });
    expect(batches.data.map((file) => file.id)).toEqual([made[0]?.id, made[2]?.id, made[4]?.id]);
    expect(batches.data[0]).toEqual(made[0]);
    const page = await (await tenant.files.list().asResponse()).json();
    expect(page).toMatchObject({ object: 'list', first_id: newestFirst[0], last_id: newestFirst[4], has_more: false });
  });

  it('refuses a limit out of range and an unknown purpose', async () => {
    expect((await apiFailure(acme.files.list({ limit: 0 }))).param).toBe('limit');
    expect((await apiFailure(acme.files.list({ limit: 10_001 }))).param).toBe('limit');
    expect((await apiFailure(acme.files.list({ purpose: 'nonsense' }))).param).toBe('purpose');
  });

  it('is refused to a role that may not read files', async () => {
    const auditor = client((await gateway.issueKey('acme', 'auditor')).secret);
    expect((await apiFailure(auditor.files.list())).status).toBe(403);
  });
});

describe('refused uploads store nothing', () => {
  it('refuses a purpose a client may not upload, before or after the file', async () => {
    const before = await storedRows();
    for (const purpose of ['batch_output', 'nonsense']) {
      const data = await toFile(Buffer.from(jsonl(2)), 'x.jsonl');
      for (const body of [
        { file: data, purpose },
        { purpose, file: data },
      ]) {
        const error = await apiFailure(acme.files.create(body as unknown as OpenAI.FileCreateParams));
        expect(error.status).toBe(400);
        expect(error.code).toBe('invalid_value');
        expect(error.param).toBe('purpose');
      }
    }
    expect(await storedRows()).toEqual(before);
  });

  it('refuses a form without a file or a purpose, a bad expires_after, a form cut short, and a body that is not a form', async () => {
    const errorOf = async (response: Response) => ((await response.json()) as { error: Record<string, unknown> }).error;
    const post = (body: FormData | string, type?: string) =>
      fetch(`${gateway.baseURL}/files`, {
        method: 'POST',
        headers: { authorization: `Bearer ${acmeKey}`, ...(type ? { 'content-type': type } : {}) },
        body,
      });
    const noFile = new FormData();
    noFile.append('purpose', 'batch');
    const missing = await post(noFile);
    expect(missing.status).toBe(400);
    expect(await errorOf(missing)).toMatchObject({ code: 'missing_required_field', param: 'file' });

    const noPurpose = new FormData();
    noPurpose.append('file', new Blob(['x']), 'x.txt');
    const unnamed = await post(noPurpose);
    expect(unnamed.status).toBe(400);
    expect(await errorOf(unnamed)).toMatchObject({ code: 'missing_required_field', param: 'purpose' });

    const tooSoon = await apiFailure(
      acme.files.create({ file: await toFile(Buffer.from('x'), 'x.txt'), purpose: 'user_data', expires_after: { anchor: 'created_at', seconds: 60 } }),
    );
    expect(tooSoon.param).toBe('expires_after.seconds');

    const cut = await post('--b\r\nContent-Disposition: form-data; name="file"; filename="x"\r\n\r\nx', 'multipart/form-data; boundary=b');
    expect(cut.status).toBe(400);
    expect((await errorOf(cut)).code).toBe('malformed_request');

    const json = await post(JSON.stringify({ purpose: 'batch' }), 'application/json');
    expect(json.status).toBe(415);
    expect((await errorOf(json)).code).toBe('unsupported_media_type');
  });

  it('refuses a file past FILE_MAX_BYTES with 413, and keeps none of it', async () => {
    const tenant = await freshTenant();
    await tenant.files.create({ file: await toFile(Buffer.from('small'), 'small.txt'), purpose: 'user_data' });
    const listed = (await tenant.files.list()).data;
    const before = await storedRows();
    for (const size of [MAX_BYTES + 1, 2 * MAX_BYTES]) {
      const error = await apiFailure(tenant.files.create({ file: await toFile(randomBytes(size), 'big.bin'), purpose: 'user_data' }));
      expect(error.status).toBe(413);
      expect(error.code).toBe('request_too_large');
    }
    expect((await tenant.files.list()).data).toEqual(listed);
    expect(await storedRows()).toEqual(before);
    // A file of exactly the limit is taken.
    expect((await tenant.files.create({ file: await toFile(randomBytes(MAX_BYTES), 'edge.bin'), purpose: 'user_data' })).bytes).toBe(MAX_BYTES);
  });

  it('refuses a batch file past BATCH_MAX_LINES with 400 naming file, whichever comes first', async () => {
    const before = await storedRows();
    const data = await toFile(Buffer.from(jsonl(MAX_BATCH_LINES + 1)), 'many.jsonl');
    for (const body of [
      { file: data, purpose: 'batch' as const },
      { purpose: 'batch' as const, file: data },
    ]) {
      const error = await apiFailure(acme.files.create(body));
      expect(error.status).toBe(400);
      expect(error.param).toBe('file');
    }
    expect(await storedRows()).toEqual(before);
    // As many lines as allowed, the last without its newline, are taken; another purpose has no line limit.
    const exact = jsonl(MAX_BATCH_LINES).slice(0, -1);
    expect((await acme.files.create({ file: await toFile(Buffer.from(exact), 'ok.jsonl'), purpose: 'batch' })).bytes).toBe(Buffer.byteLength(exact));
    expect((await acme.files.create({ file: data, purpose: 'user_data' })).purpose).toBe('user_data');
  });
});
