import { Module } from '@nestjs/common';
import { ChatModule } from '../chat/chat.module';
import { ToolsModule } from '../tools/tools.module';
import { JsonSchemaModule } from './json-schema.module';
import { OrgSkillsController } from './org-skills.controller';
import { SkillsController } from './skills.controller';
import { SkillsRepository } from './skills.repository';
import { SkillsService } from './skills.service';
import { SkillTemplatesRepository } from './templates/skill-templates.repository';
import { SkillTemplatesSeederService } from './templates/skill-templates-seeder.service';

@Module({
  imports: [ChatModule, JsonSchemaModule, ToolsModule],
  controllers: [OrgSkillsController, SkillsController],
  providers: [
    SkillsRepository,
    SkillsService,
    SkillTemplatesRepository,
    SkillTemplatesSeederService,
  ],
  exports: [SkillTemplatesRepository, JsonSchemaModule],
})
export class SkillsModule {}
