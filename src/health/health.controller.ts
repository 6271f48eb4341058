import { Controller, Get } from '@nestjs/common';
import {
  ApiExtraModels,
  ApiOperation,
  ApiResponse,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import { Public } from '../common/decorators/public.decorator';
import { problemResponse } from '../common/openapi/api-problems.decorator';
import {
  LivenessDto,
  ReadinessAdmissionDto,
  ReadinessChecksDto,
  ReadinessDto,
} from './dto/health.response';
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
  @ApiOperation({
    summary:
      'Readiness: 200 while the database answers (status degraded when Redis does not), 503 otherwise',
  })
  @ApiExtraModels(ReadinessChecksDto, ReadinessAdmissionDto)
  @ApiResponse({
    status: 503,
    ...problemResponse(503, {
      checks: { $ref: getSchemaPath(ReadinessChecksDto) },
      admission: { $ref: getSchemaPath(ReadinessAdmissionDto) },
    }),
  })
  ready(): Promise<ReadinessDto> {
    return this.health.readiness();
  }
}
