/** The fields of a file upload besides the file, read as OpenAI's Files API reads them. */
import { FILE_PURPOSES, type FilePurpose } from '../../infra/store/repository.ts';
import { InvalidValueError, MissingRequiredFieldError } from '../../errors/gateway-error.ts';

/** The purposes a client may upload with: `batch_output` files are the gateway's own. */
export const UPLOAD_PURPOSES: readonly FilePurpose[] = FILE_PURPOSES.filter((purpose) => purpose !== 'batch_output');

/** `expires_after[seconds]`'s range, as OpenAI takes it: an hour to 30 days. */
export const EXPIRES_AFTER_SECONDS = { min: 3600, max: 2_592_000 } as const;

/** The purpose of an upload: 400 `missing_required_field` without one, `invalid_value` for one a client may not upload. */
export function uploadPurpose(value: string | undefined): FilePurpose {
  if (value === undefined) throw new MissingRequiredFieldError('purpose');
  if (!(UPLOAD_PURPOSES as readonly string[]).includes(value))
    throw new InvalidValueError('purpose', `Invalid value for 'purpose': '${value}'; must be one of ${UPLOAD_PURPOSES.join(', ')}.`);
  return value as FilePurpose;
}

/**
 * `expires_after` (`{anchor: 'created_at', seconds}`, sent as the form fields `expires_after[anchor]`
 * and `expires_after[seconds]`): its seconds, or null when absent.
 */
export function expiresAfterSeconds(anchor: string | undefined, seconds: string | undefined): number | null {
  if (anchor === undefined && seconds === undefined) return null;
  if (anchor === undefined) throw new MissingRequiredFieldError('expires_after.anchor');
  if (seconds === undefined) throw new MissingRequiredFieldError('expires_after.seconds');
  if (anchor !== 'created_at') throw new InvalidValueError('expires_after.anchor', "Invalid value for 'expires_after.anchor': must be 'created_at'.");
  const value = /^\d{1,10}$/.test(seconds) ? Number(seconds) : NaN;
  if (!(value >= EXPIRES_AFTER_SECONDS.min && value <= EXPIRES_AFTER_SECONDS.max)) {
    const range = `${EXPIRES_AFTER_SECONDS.min} to ${EXPIRES_AFTER_SECONDS.max}`;
    throw new InvalidValueError('expires_after.seconds', `Invalid value for 'expires_after.seconds': must be an integer from ${range}; got '${seconds}'.`);
  }
  return value;
}

/**
 * When a file expires: `expires_after` when given; else a `batch` file after `ttlMs` and any
 * other never, as OpenAI keeps files until they are deleted but batch inputs for 30 days.
 */
export function fileExpiry(purpose: FilePurpose, afterSeconds: number | null, createdAt: Date, ttlMs: number): Date | null {
  if (afterSeconds !== null) return new Date(createdAt.getTime() + afterSeconds * 1000);
  return purpose === 'batch' ? new Date(createdAt.getTime() + ttlMs) : null;
}
