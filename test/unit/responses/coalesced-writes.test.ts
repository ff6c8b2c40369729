/** CoalescedWrites: one write at a time, what arrives meanwhile in the next one, each caller told how its own write went. */
import { describe, expect, it } from 'vitest';
import { CoalescedWrites } from '../../../src/infra/responses/coalesced-writes.ts';

/** A write that records its batches and finishes when the test says. */
function controlledWrite() {
  const batches: number[][] = [];
  const finish: Array<(error?: Error) => void> = [];
  const write = (records: number[]) =>
    new Promise<void>((resolve, reject) => {
      batches.push(records);
      finish.push((error) => (error ? reject(error) : resolve()));
    });
  return { batches, finish, write };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('CoalescedWrites', () => {
  it('writes a lone record at once, and those arriving during a write together in the next', async () => {
    const { batches, finish, write } = controlledWrite();
    const writes = new CoalescedWrites(write);
    const first = writes.write(1);
    await tick();
    expect(batches).toEqual([[1]]);
    const later = [writes.write(2), writes.write(3), writes.write(4)];
    await tick();
    expect(batches).toEqual([[1]]);
    finish[0]?.();
    await first;
    await tick();
    expect(batches).toEqual([[1], [2, 3, 4]]);
    finish[1]?.();
    await Promise.all(later);
  });

  it('fails only the callers of the write that failed; the next write goes on', async () => {
    const { batches, finish, write } = controlledWrite();
    const writes = new CoalescedWrites(write);
    const first = writes.write(1);
    await tick();
    const second = writes.write(2);
    finish[0]?.(new Error('store away'));
    await expect(first).rejects.toThrow('store away');
    await tick();
    expect(batches).toEqual([[1], [2]]);
    finish[1]?.();
    await expect(second).resolves.toBeUndefined();
  });
});
