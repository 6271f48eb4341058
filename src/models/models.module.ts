import { Module } from '@nestjs/common';
import { CatalogModule } from '../catalog/catalog.module';
import { ProviderEndpoints } from './provider-endpoints';
import { EndpointHealth } from './routing/endpoint-health';
import { KeyCooldowns } from './routing/key-cooldowns';

/**
 * The catalog's endpoints and their adapters, key pools and shared cooldowns (the models themselves:
 * CatalogCache). docs/adr/0063-providers-and-routing.md
 */
@Module({
  imports: [CatalogModule],
  providers: [ProviderEndpoints, KeyCooldowns, EndpointHealth],
  exports: [ProviderEndpoints, KeyCooldowns, EndpointHealth],
})
export class ModelsModule {}
