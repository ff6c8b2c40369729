import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { generateApiKey, hashApiKeySecret } from '../../../src/domain/access/api-key-secret.ts';

describe('generateApiKey', () => {
  it('makes a key_ id, a gwk_ secret of 32 random bytes, and the SHA-256 of the whole secret', () => {
    const key = generateApiKey();
    expect(key.id).toMatch(/^key_[0-9a-z]{26}$/);
    expect(key.secret).toMatch(/^gwk_[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(key.secret.slice(4), 'base64url')).toHaveLength(32);
    expect(key.secretHash).toBe(createHash('sha256').update(key.secret).digest('hex'));
  });

  it('never repeats ids or secrets', () => {
    const keys = Array.from({ length: 100 }, () => generateApiKey());
    expect(new Set(keys.map((k) => k.id)).size).toBe(100);
    expect(new Set(keys.map((k) => k.secret)).size).toBe(100);
  });
});

describe('hashApiKeySecret', () => {
  it('is the lowercase hex SHA-256 of the string, prefix included', () => {
    expect(hashApiKeySecret('gwk_abc')).toBe(createHash('sha256').update('gwk_abc', 'utf8').digest('hex'));
    expect(hashApiKeySecret('gwk_abc')).toMatch(/^[0-9a-f]{64}$/);
  });

  it('distinguishes secrets that differ only in the prefix', () => {
    expect(hashApiKeySecret('gwk_abc')).not.toBe(hashApiKeySecret('abc'));
  });
});
