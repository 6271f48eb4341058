import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentUser } from '../auth/current-user.decorator';
import { SessionUser } from '../auth/session-user';
import { ApiProblems } from '../common/openapi/api-problems.decorator';
import { ToolListDto } from './dto/tool.response';
import { ToolsService } from './tools.service';

@ApiTags('tools')
@Controller('tools')
export class ToolsController {
  constructor(private readonly tools: ToolsService) {}

  @Get()
  @ApiOperation({
    summary:
      'The tools the caller may let a model use now (built-in ones and those of MCP servers)',
  })
  @ApiOkResponse({ type: ToolListDto })
  @ApiProblems(401)
  list(@CurrentUser() user: SessionUser): Promise<ToolListDto> {
    return this.tools.list(user);
  }
}
