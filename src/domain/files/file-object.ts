/** OpenAI's file object, as every /v1/files route answers it. */
import type { StoredFile } from '../../infra/store/repository.ts';

const seconds = (date: Date): number => Math.floor(date.getTime() / 1000);

/** A stored file as OpenAI's Files API shows it: stored whole means processed, there being nothing more to do to it. */
export function fileObject(file: StoredFile) {
  return {
    id: file.id,
    object: 'file' as const,
    bytes: file.bytes,
    created_at: seconds(file.createdAt),
    expires_at: file.expiresAt === null ? null : seconds(file.expiresAt),
    filename: file.filename,
    purpose: file.purpose,
    status: 'processed' as const,
    status_details: null,
  };
}

/** OpenAI's answer to a deleted file. */
export function deletedFileObject(id: string) {
  return { id, object: 'file' as const, deleted: true as const };
}
