/**
 * Files in PostgreSQL: `files` (one row each, visible once `complete`) and `file_chunks` (its bytes
 * in chunks of FILE_CHUNK_BYTES, all but the last full, so that a read from an offset starts at
 * its chunk). A file is written and read a chunk at a time: no query carries all of it.
 */
import type { Pool } from 'pg';
import type { FilePurpose, FileRepository, StoredFile } from '../repository.ts';
import { FileCounter, UNFINISHED_FILE_TTL_MS } from '../file-fields.ts';

/** The size of every stored chunk but a file's last. */
export const FILE_CHUNK_BYTES = 1024 * 1024;

interface FileRow {
  id: string;
  tenant_id: string;
  purpose: FilePurpose;
  filename: string;
  bytes: string;
  lines: string;
  complete: boolean;
  created_at: Date;
  expires_at: Date | null;
}

const COLUMNS = 'id, tenant_id, purpose, filename, bytes, lines, complete, created_at, expires_at';
const VISIBLE = 'complete AND (expires_at IS NULL OR expires_at > now())';

// A new id is claimed; so is one a writer left unfinished (a re-run after a crash), never a complete one.
const CLAIM = `
  INSERT INTO files (id, tenant_id, purpose, filename, created_at, expires_at, complete)
  VALUES ($1, $2, $3, $4, $5, $6, false)
  ON CONFLICT (id) DO UPDATE SET purpose = EXCLUDED.purpose, filename = EXCLUDED.filename, created_at = EXCLUDED.created_at,
    expires_at = EXCLUDED.expires_at
  WHERE NOT files.complete AND files.tenant_id = EXCLUDED.tenant_id
  RETURNING id`;
const COMPLETE = `
  UPDATE files SET purpose = $2, filename = $3, expires_at = $4, bytes = $5, lines = $6, complete = true
  WHERE id = $1 AND NOT complete RETURNING ${COLUMNS}`;
const INSERT_CHUNK = 'INSERT INTO file_chunks (file_id, seq, data) VALUES ($1, $2, $3)';
/** The most bytes of a chunk one row of a read carries. */
const READ_PIECE_BYTES = 64 * 1024;
// The bytes of a chunk outside the read stay in the database, and those inside come back in rows of
// READ_PIECE_BYTES: a 1 MiB row is 2 MiB of hex text, which the driver gathers in a receive buffer
// it grows by doubling for each such row, leaving the old ones to the collector. Reading a 200 MB
// file grew a process by ~120 MB that way; in 64 KiB rows, which reuse one buffer, by ~50 MB, in
// two-thirds of the time.
const READ_CHUNK = `
  SELECT substring(data FROM piece FOR LEAST(${READ_PIECE_BYTES}, $3::integer + $4::integer - piece)) AS data
  FROM file_chunks, generate_series($3::integer, $3::integer + $4::integer - 1, ${READ_PIECE_BYTES}) AS piece
  WHERE file_id = $1 AND seq = $2 ORDER BY piece`;

function listQuery(order: 'asc' | 'desc'): string {
  const [compare, direction] = order === 'asc' ? ['>', 'ASC'] : ['<', 'DESC'];
  // An `after` that is not one of the tenant's files gives an empty page.
  return `
    SELECT ${COLUMNS} FROM files
    WHERE tenant_id = $1 AND ${VISIBLE} AND ($2::text IS NULL OR purpose = $2)
      AND ($3::text IS NULL OR (created_at, id) ${compare} (SELECT created_at, id FROM files WHERE tenant_id = $1 AND id = $3))
    ORDER BY created_at ${direction}, id ${direction} LIMIT $4`;
}
const LIST = { asc: listQuery('asc'), desc: listQuery('desc') };

// Chunks go with their file (ON DELETE CASCADE).
// A running batch's input stays until the batch has ended, whatever its own expiry.
const SWEEP = `
  DELETE FROM files WHERE id IN (
    SELECT f.id FROM files f WHERE f.expires_at <= $1
      AND NOT EXISTS (
        SELECT 1 FROM batches b
        WHERE b.tenant_id = f.tenant_id AND b.input_file_id = f.id AND b.status IN ('validating', 'in_progress', 'finalizing', 'cancelling')
      )
    LIMIT $2
  )`;

function toStored(row: FileRow): StoredFile {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    purpose: row.purpose,
    filename: row.filename,
    bytes: Number(row.bytes),
    lines: Number(row.lines),
    createdAt: row.created_at,
    expiresAt: row.expires_at,
  };
}

async function visible(pool: Pool, tenantId: string, id: string): Promise<StoredFile | null> {
  const result = await pool.query<FileRow>(`SELECT ${COLUMNS} FROM files WHERE tenant_id = $1 AND id = $2 AND ${VISIBLE}`, [tenantId, id]);
  return result.rows[0] ? toStored(result.rows[0]) : null;
}

/** What the stored file of `id` is: the record of a complete one of the tenant's; else it is not ours to return. */
async function existing(pool: Pool, file: Omit<StoredFile, 'bytes' | 'lines'>): Promise<StoredFile> {
  const result = await pool.query<FileRow>(`SELECT ${COLUMNS} FROM files WHERE id = $1`, [file.id]);
  const row = result.rows[0];
  if (row?.complete && row.tenant_id === file.tenantId) return toStored(row);
  throw new Error(`The file id '${file.id}' is taken${row ? '' : ', and was removed while it was written'}.`);
}

/** Writes `content` as full chunks of `fileId`, a chunk at a time; returns its counts. */
async function writeChunks(pool: Pool, fileId: string, content: AsyncIterable<Uint8Array>): Promise<FileCounter> {
  const counter = new FileCounter();
  let chunk = Buffer.allocUnsafe(FILE_CHUNK_BYTES);
  let filled = 0;
  let seq = 0;
  for await (const piece of content) {
    counter.add(piece);
    for (let at = 0; at < piece.length;) {
      const taken = Math.min(piece.length - at, FILE_CHUNK_BYTES - filled);
      chunk.set(piece.subarray(at, at + taken), filled);
      filled += taken;
      at += taken;
      if (filled === FILE_CHUNK_BYTES) {
        await pool.query(INSERT_CHUNK, [fileId, seq++, chunk]);
        chunk = Buffer.allocUnsafe(FILE_CHUNK_BYTES);
        filled = 0;
      }
    }
  }
  if (filled > 0) await pool.query(INSERT_CHUNK, [fileId, seq, chunk.subarray(0, filled)]);
  return counter;
}

/** The file's bytes from byte `offset` to `end`, one query a chunk; a chunk gone midway (the file deleted) is an error, not a short file. */
async function* readChunks(pool: Pool, tenantId: string, id: string, offset: number, end: number): AsyncGenerator<Uint8Array> {
  const found = await pool.query<{ bytes: string }>('SELECT bytes FROM files WHERE tenant_id = $1 AND id = $2 AND complete', [tenantId, id]);
  if (!found.rows[0]) return;
  const until = Math.min(end, Number(found.rows[0].bytes));
  for (let at = offset; at < until;) {
    const seq = Math.floor(at / FILE_CHUNK_BYTES);
    const skip = at - seq * FILE_CHUNK_BYTES;
    const length = Math.min(FILE_CHUNK_BYTES - skip, until - at);
    const { rows } = await pool.query<{ data: Buffer }>(READ_CHUNK, [id, seq, skip + 1, length]);
    if (rows.length === 0) throw new Error(`The file '${id}' was removed while it was read.`);
    at += length;
    for (const { data } of rows) yield data;
  }
}

/** The FileRepository over `pool`. */
export function createFileRepository(pool: Pool): FileRepository {
  return {
    async create(file, content) {
      const unfinishedUntil = new Date(Date.now() + UNFINISHED_FILE_TTL_MS);
      const claimed = await pool.query(CLAIM, [file.id, file.tenantId, file.purpose, file.filename, file.createdAt, unfinishedUntil]);
      if (claimed.rowCount === 0) return existing(pool, file);
      let counted: FileCounter;
      try {
        // What an unfinished writer of this id left.
        await pool.query('DELETE FROM file_chunks WHERE file_id = $1', [file.id]);
        counted = await writeChunks(pool, file.id, content);
      } catch (error) {
        // Should this fail too, the unfinished file's expiry has the sweep remove it.
        await pool.query('DELETE FROM files WHERE id = $1 AND NOT complete', [file.id]).catch(() => undefined);
        throw error;
      }
      // The record's fields are read only now: a caller may settle them while `content` runs.
      const completed = await pool.query<FileRow>(COMPLETE, [file.id, file.purpose, file.filename, file.expiresAt, counted.bytes, counted.lines]);
      return completed.rows[0] ? toStored(completed.rows[0]) : existing(pool, file);
    },
    get: (tenantId, id) => visible(pool, tenantId, id),
    async list(tenantId, page) {
      const result = await pool.query<FileRow>(LIST[page.order], [tenantId, page.purpose ?? null, page.after, page.limit + 1]);
      return { files: result.rows.slice(0, page.limit).map(toStored), hasMore: result.rows.length > page.limit };
    },
    read: (tenantId, id, offset = 0, end = Infinity) => readChunks(pool, tenantId, id, offset, end),
    async delete(tenantId, id) {
      // An expired file the sweep has not reached yet goes too, but was no longer there to the client.
      const deleted = await pool.query<{ live: boolean }>(
        'DELETE FROM files WHERE tenant_id = $1 AND id = $2 AND complete RETURNING (expires_at IS NULL OR expires_at > now()) AS live',
        [tenantId, id],
      );
      return deleted.rows[0]?.live === true;
    },
    async sweep(now, limit) {
      const swept = await pool.query(SWEEP, [now, limit]);
      return swept.rowCount ?? 0;
    },
  };
}
