import { Module } from '@nestjs/common';
import { ChatModule } from '../chat/chat.module';
import { JsonSchemaService } from './json-schema.service';
import { SkillsController } from './skills.controller';
import { SkillsRepository } from './skills.repository';
import { SkillsService } from './skills.service';
import { SkillTemplatesRepository } from './templates/skill-templates.repository';
import { SkillTemplatesSeederService } from './templates/skill-templates-seeder.service';

@Module({
  imports: [ChatModule],
  controllers: [SkillsController],
  providers: [
    JsonSchemaService,
    SkillsRepository,
    SkillsService,
    SkillTemplatesRepository,
    SkillTemplatesSeederService,
  ],
  exports: [SkillTemplatesRepository, JsonSchemaService],
})
export class SkillsModule {}
