import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { AdminOnly } from './admin.guard';
import { AdminProvidersService } from './admin-providers.service';
import { AdminProviderListDto } from './dto/admin-providers.response';

@AdminOnly()
@Controller('admin/providers')
export class AdminProvidersController {
  constructor(private readonly providers: AdminProvidersService) {}

  @Get()
  @ApiOperation({
    summary:
      "The catalog's model endpoints: configured or why not, their models, key pools (labels and fingerprints, never keys) with cooldowns, and the last 15 minutes' health",
  })
  @ApiOkResponse({ type: AdminProviderListDto })
  list(): Promise<AdminProviderListDto> {
    return this.providers.list();
  }
}
