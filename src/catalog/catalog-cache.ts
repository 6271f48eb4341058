import { Injectable } from '@nestjs/common';
import { ChangeFeed } from '../infra/database/change-feed';
import { CatalogRepository } from './catalog.repository';

export type ActiveModel = Awaited<
  ReturnType<CatalogRepository['findActiveModels']>
>[number] & { planCodes: ReadonlySet<string> };
export type ActivePlan = Awaited<
  ReturnType<CatalogRepository['findActivePlans']>
>[number];

/** The active catalog as one immutable value; `version` changes whenever it is read again. */
export interface CatalogSnapshot {
  version: number;
  /** Active models by id, in catalog order. */
  models: ReadonlyMap<string, ActiveModel>;
  /** Active plans in catalog order. */
  plans: readonly ActivePlan[];
}

/**
 * The active models and plans, read from the database once and kept until it announces a catalog change
 * (a sync at any instance's start, or an operator's SQL; see ChangeFeed). While announcements cannot be
 * heard every call reads the database. Concurrent callers share one read.
 */
@Injectable()
export class CatalogCache {
  private cached: CatalogSnapshot | undefined;
  private loading:
    { promise: Promise<CatalogSnapshot>; generation: number } | undefined;
  private generation = 0;
  private versions = 0;

  constructor(
    private readonly catalog: CatalogRepository,
    private readonly changes: ChangeFeed,
  ) {
    changes.onChange((change) => {
      if (change.kind !== 'user') this.invalidate();
    });
  }

  current(): Promise<CatalogSnapshot> {
    if (this.cached && this.changes.live) return Promise.resolve(this.cached);
    // A read that began before the latest change may miss it: only join one that began after.
    if (this.loading?.generation !== this.generation) {
      const loading = { generation: this.generation, promise: this.load() };
      this.loading = loading;
      void loading.promise
        .finally(() => {
          if (this.loading === loading) this.loading = undefined;
        })
        .catch(() => undefined);
    }
    return this.loading.promise;
  }

  invalidate(): void {
    this.generation += 1;
    this.cached = undefined;
  }

  private async load(): Promise<CatalogSnapshot> {
    const generation = this.generation;
    const [models, plans] = await Promise.all([
      this.catalog.findActiveModels(),
      this.catalog.findActivePlans(),
    ]);
    this.versions += 1;
    const snapshot: CatalogSnapshot = {
      version: this.versions,
      models: new Map(
        models.map((model) => [
          model.id,
          {
            ...model,
            planCodes: new Set(model.plans.map((plan) => plan.planCode)),
          },
        ]),
      ),
      plans,
    };
    // A change announced while this read ran may not be in it: use it for this call, keep it for none.
    if (generation === this.generation && this.changes.live)
      this.cached = snapshot;
    return snapshot;
  }
}
