import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { AppLogger } from '../common/logging/app-logger';
import { CatalogCache } from './catalog-cache';
import { Catalog, endpointIdOf, endpointKindOf } from './catalog.schema';
import { CatalogRepository } from './catalog.repository';
import { CATALOG } from './catalog.token';

/**
 * Makes the database match the catalog file at start: entries are upserted, entries no longer in the
 * file are deactivated (never deleted: users, ledger entries and checkouts still point at them).
 * Idempotent, and serialised by an advisory lock so instances starting together do not interleave.
 * docs/adr/0014-catalog-and-plans.md
 */
@Injectable()
export class CatalogSyncService implements OnApplicationBootstrap {
  constructor(
    @Inject(CATALOG) private readonly file: Catalog,
    private readonly catalog: CatalogRepository,
    private readonly cache: CatalogCache,
    private readonly log: AppLogger,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.sync(this.file);
  }

  async sync(catalog: Catalog): Promise<void> {
    const deactivated = await this.catalog.inTransaction(async (db) => {
      await this.catalog.lockCatalogSync(db);
      for (const [index, model] of catalog.models.entries()) {
        const id = endpointIdOf(model);
        // parseCatalog refused a model whose endpoint is unknown.
        const kind = endpointKindOf(catalog, id) ?? 'local';
        await this.catalog.upsertModel(db, model, { id, kind }, index);
      }
      for (const [index, plan] of catalog.plans.entries()) {
        await this.catalog.upsertPlan(db, plan, index);
        await this.catalog.replacePlanModels(db, plan.code, plan.models);
      }
      const models = await this.catalog.deactivateModelsNotIn(
        db,
        catalog.models.map((model) => model.id),
      );
      const plans = await this.catalog.deactivatePlansNotIn(
        db,
        catalog.plans.map((plan) => plan.code),
      );
      return { models, plans };
    });
    // Other instances hear of it from the database; this one does not wait for that.
    this.cache.invalidate();
    this.log.info(
      {
        models: catalog.models.length,
        plans: catalog.plans.length,
        deactivatedModels: deactivated.models,
        deactivatedPlans: deactivated.plans,
      },
      'catalog synced',
    );
  }
}
