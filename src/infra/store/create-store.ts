/** Builds the one Repository a process uses, from the store part of its configuration. */
import type { StoreConfig } from '../../config.ts';
import type { Repository } from './repository.ts';

/** The adapter `config` names: MongoDB via mongoose, or PostgreSQL via pg. */
export async function createStore(config: StoreConfig): Promise<Repository> {
  // Imported on demand so a process loads only its own driver (mongoose alone costs ~120 ms at start).
  switch (config.kind) {
    case 'mongodb': {
      const { createMongoRepository } = await import('./mongodb/adapter.ts');
      return createMongoRepository(config.mongodbUri);
    }
    case 'postgres': {
      const { createPostgresRepository } = await import('./postgres/adapter.ts');
      return createPostgresRepository(config.databaseUrl);
    }
  }
}
