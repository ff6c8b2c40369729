/** The development tenant and the keys `npm run dev` prints at every start. */
import { generateApiKey } from '../domain/access/api-key-secret.ts';
import { TenantExistsError, type Repository, type Role } from '../infra/store/repository.ts';

/** The tenant dev's keys belong to. */
export const DEV_TENANT = 'dev';

async function issueKey(repository: Repository, role: Role): Promise<string> {
  const key = generateApiKey();
  await repository.apiKeys.create({ id: key.id, tenantId: DEV_TENANT, role, secretHash: key.secretHash });
  return key.secret;
}

/** Creates the tenant when missing and issues a new developer key and admin key; only their hashes are kept, so old ones cannot be shown again. */
export async function issueDevKeys(repository: Repository): Promise<{ developer: string; admin: string }> {
  await repository.tenants.create({ id: DEV_TENANT, name: 'Development' }).catch((error: unknown) => {
    if (!(error instanceof TenantExistsError)) throw error;
  });
  return { developer: await issueKey(repository, 'developer'), admin: await issueKey(repository, 'admin') };
}
