import { Module } from '@nestjs/common';
import { CatalogModule } from '../catalog/catalog.module';
import { PlansController } from './plans.controller';
import { PlansService } from './plans.service';

@Module({
  imports: [CatalogModule],
  controllers: [PlansController],
  providers: [PlansService],
})
export class PlansModule {}
