import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { AppLogger } from '../../common/logging/app-logger';
import { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { loadSkillTemplatesFile } from './skill-templates-file';
import { SkillTemplatesRepository } from './skill-templates.repository';

/**
 * Adds the starter templates of SKILL_TEMPLATES_FILE that are not in the database yet. Existing templates
 * are never overwritten: once seeded they belong to the admins (edited or retired through /v1/admin).
 * A malformed file stops the start, naming the entry.
 */
@Injectable()
export class SkillTemplatesSeederService implements OnApplicationBootstrap {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly templates: SkillTemplatesRepository,
    private readonly log: AppLogger,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const seeds = loadSkillTemplatesFile(this.config.skillTemplatesFile);
    const added = await this.templates.insertMissing(seeds);
    this.log.info({ templates: seeds.length, added }, 'skill templates seeded');
  }
}
