import { Controller, Get } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Public } from '../common/decorators/public.decorator';
import { ApiProblems } from '../common/openapi/api-problems.decorator';
import { LivenessDto, ReadinessDto } from './dto/health.response';
import { HealthService } from './health.service';

@Public()
@ApiTags('health')
@Controller('health')
export class HealthController {
  constructor(private readonly health: HealthService) {}

  @Get('live')
  @ApiOperation({ summary: 'Liveness: the process answers HTTP' })
  live(): LivenessDto {
    return { status: 'ok' };
  }

  @Get('ready')
  @ApiOperation({ summary: 'Readiness: the database and (when configured) Redis answer' })
  @ApiProblems(503)
  ready(): Promise<ReadinessDto> {
    return this.health.readiness();
  }
}
