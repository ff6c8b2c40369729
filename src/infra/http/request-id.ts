import { randomBytes } from 'node:crypto';
import { ulid } from 'ulid';

// ulid's default randomness makes one getRandomValues call per character, which profiling
// showed as a sixth of the web tier's CPU; one randomBytes call per 4 KiB serves 256 ids.
const POOL_SIZE = 4096;
let pool = randomBytes(POOL_SIZE);
let offset = 0;

function pooledRandom(): number {
  if (offset === POOL_SIZE) {
    pool = randomBytes(POOL_SIZE);
    offset = 0;
  }
  return (pool[offset++] as number) / 256;
}

/** A new request id: `req_` and a ULID (time-ordered, 80 random bits). */
export function newRequestId(): string {
  return `req_${ulid(Date.now(), pooledRandom)}`;
}
