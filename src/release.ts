import type { Logger } from 'pino';
import type { Config } from './config.ts';
import { loadCatalogFile } from './domain/catalog/load-catalog.ts';
import { createStore } from './infra/store/create-store.ts';

/** The release phase: validate the catalog, then create tables/collections and indexes. */
export async function runRelease(config: Config, log: Logger): Promise<void> {
  const catalog = await loadCatalogFile(config.env.CATALOG);
  log.info({ models: Object.keys(catalog.models).length }, 'catalog is valid');
  const repository = await createStore(config.store);
  try {
    await repository.migrate();
    log.info({ store: repository.kind }, 'store migrated');
  } finally {
    await repository.close();
  }
}

if (import.meta.main) {
  const { configOrExit } = await import('./boot.ts');
  const { createLogger } = await import('./log.ts');
  const config = configOrExit('release');
  const log = createLogger(config.env.LOG_LEVEL, 'release');
  await runRelease(config, log).catch((error: unknown) => {
    log.fatal({ err: error }, `release failed: ${(error as Error).message}`);
    process.exit(1);
  });
}
