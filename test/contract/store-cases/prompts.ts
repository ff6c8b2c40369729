/** Contract cases of PromptRepository. */
import { expect, it } from 'vitest';
import { PromptNotFoundError, type PromptVersion } from '../../../src/infra/store/repository.ts';
import { uid, type StoreContext } from './context.ts';

/** Registers the prompt cases against `store`. */
export function promptCases(store: StoreContext): void {
  const create = (tenantId: string, name: string, activate = false, content = 'Hello {{name}}') =>
    store.repo().prompts.createVersion({
      tenantId,
      name,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content },
      ],
      model: 'fast',
      parameters: { temperature: 0.2, max_tokens: 64, stop: ['\n'], nested: { a: null } },
      variables: ['name'],
      createdBy: 'key_creator',
      activate,
    });
  const versions = (list: PromptVersion[] | undefined) => list?.map((v) => v.version);

  it('stores version 1 of a new name, active at once, and reads it back exactly', async () => {
    const [tenantId, name] = [`t-${uid()}`, `welcome-${uid()}`];
    const first = await create(tenantId, name);
    expect(first).toEqual({
      tenantId,
      name,
      version: 1,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hello {{name}}' },
      ],
      model: 'fast',
      parameters: { temperature: 0.2, max_tokens: 64, stop: ['\n'], nested: { a: null } },
      variables: ['name'],
      createdAt: expect.any(Date),
      createdBy: 'key_creator',
    });
    expect(await store.repo().prompts.getActive(tenantId, name)).toEqual(first);
  });

  it('keeps empty parameters and variables as given', async () => {
    const [tenantId, name] = [`t-${uid()}`, `plain-${uid()}`];
    const input = {
      tenantId,
      name,
      messages: [{ role: 'user', content: 'Hi' }],
      model: 'fast',
      parameters: {},
      variables: [],
      createdBy: 'cli',
      activate: false,
    };
    await store.repo().prompts.createVersion(input);
    expect(await store.repo().prompts.getActive(tenantId, name)).toMatchObject({ parameters: {}, variables: [], messages: input.messages });
  });

  it('activates a later version only when asked, and lists history newest first', async () => {
    const [tenantId, name] = [`t-${uid()}`, `welcome-${uid()}`];
    await create(tenantId, name);
    const second = await create(tenantId, name, false, 'Hi {{name}}');
    expect(second.version).toBe(2);
    expect((await store.repo().prompts.getActive(tenantId, name))?.version).toBe(1);
    const third = await create(tenantId, name, true, 'Hey {{name}}');
    expect(await store.repo().prompts.getActive(tenantId, name)).toEqual(third);
    const history = await store.repo().prompts.history(tenantId, name);
    expect(history?.name).toBe(name);
    expect(history?.activeVersion).toBe(3);
    expect(versions(history?.versions)).toEqual([3, 2, 1]);
    expect(history?.versions[1]).toEqual(second);
  });

  it('rolls back with activate() and forward again', async () => {
    const [tenantId, name] = [`t-${uid()}`, `welcome-${uid()}`];
    const first = await create(tenantId, name);
    await create(tenantId, name, true);
    expect(await store.repo().prompts.activate(tenantId, name, 1)).toEqual(first);
    expect(await store.repo().prompts.getActive(tenantId, name)).toEqual(first);
    expect((await store.repo().prompts.history(tenantId, name))?.activeVersion).toBe(1);
    await create(tenantId, name);
    expect((await store.repo().prompts.getActive(tenantId, name))?.version).toBe(1);
    expect((await store.repo().prompts.activate(tenantId, name, 3)).version).toBe(3);
    expect((await store.repo().prompts.getActive(tenantId, name))?.version).toBe(3);
  });

  it('throws PromptNotFoundError when activating an unknown name or version, changing nothing', async () => {
    const [tenantId, name] = [`t-${uid()}`, `welcome-${uid()}`];
    await create(tenantId, name);
    const unknownVersion = store.repo().prompts.activate(tenantId, name, 2);
    await expect(unknownVersion).rejects.toBeInstanceOf(PromptNotFoundError);
    await expect(store.repo().prompts.activate(tenantId, name, 2)).rejects.toThrow(/no version 2/);
    await expect(store.repo().prompts.activate(tenantId, `missing-${uid()}`, 1)).rejects.toBeInstanceOf(PromptNotFoundError);
    expect((await store.repo().prompts.getActive(tenantId, name))?.version).toBe(1);
  });

  it('returns null for the active version and history of an unknown name', async () => {
    expect(await store.repo().prompts.getActive(`t-${uid()}`, 'nothing')).toBeNull();
    expect(await store.repo().prompts.history(`t-${uid()}`, 'nothing')).toBeNull();
  });

  it('gives concurrent creates of one name distinct consecutive versions', async () => {
    const [tenantId, name] = [`t-${uid()}`, `busy-${uid()}`];
    const created = await Promise.all(Array.from({ length: 10 }, (_, i) => create(tenantId, name, false, `v${i} {{name}}`)));
    expect(created.map((v) => v.version).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    const history = await store.repo().prompts.history(tenantId, name);
    expect(versions(history?.versions)).toEqual([10, 9, 8, 7, 6, 5, 4, 3, 2, 1]);
    expect(history?.activeVersion).toBe(1);
    const next = await create(tenantId, name);
    expect(next.version).toBe(11);
  });

  it("never shows one tenant's prompt to another with the same name", async () => {
    const [a, b, name] = [`t-${uid()}`, `t-${uid()}`, `shared-${uid()}`];
    await create(a, name);
    await create(a, name, true);
    expect(await store.repo().prompts.getActive(b, name)).toBeNull();
    expect(await store.repo().prompts.history(b, name)).toBeNull();
    await expect(store.repo().prompts.activate(b, name, 1)).rejects.toBeInstanceOf(PromptNotFoundError);
    const own = await create(b, name, false, 'B {{name}}');
    expect(own.version).toBe(1);
    expect((await store.repo().prompts.getActive(a, name))?.version).toBe(2);
    expect(versions((await store.repo().prompts.history(b, name))?.versions)).toEqual([1]);
  });

  it("lists the tenant's prompts by name, with their active and newest versions and the newest's time", async () => {
    const [tenantId, other] = [`t-${uid()}`, `t-${uid()}`];
    expect(await store.repo().prompts.list(tenantId)).toEqual([]);
    await create(tenantId, 'zeta');
    await create(tenantId, 'alpha');
    const second = await create(tenantId, 'alpha');
    await create(tenantId, 'Beta', true);
    await create(other, 'alpha');
    expect(await store.repo().prompts.list(tenantId)).toEqual([
      { name: 'Beta', activeVersion: 1, latestVersion: 1, updatedAt: expect.any(Date) },
      { name: 'alpha', activeVersion: 1, latestVersion: 2, updatedAt: second.createdAt },
      { name: 'zeta', activeVersion: 1, latestVersion: 1, updatedAt: expect.any(Date) },
    ]);
    await store.repo().prompts.activate(tenantId, 'alpha', 2);
    expect((await store.repo().prompts.list(tenantId))[1]).toMatchObject({ name: 'alpha', activeVersion: 2, latestVersion: 2 });
    expect((await store.repo().prompts.list(other)).map((prompt) => prompt.name)).toEqual(['alpha']);
  });
}
