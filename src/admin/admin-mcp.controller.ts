import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Patch,
  Post,
} from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
} from '@nestjs/swagger';
import { CurrentUser } from '../auth/current-user.decorator';
import { SessionUser } from '../auth/session-user';
import { ApiProblems } from '../common/openapi/api-problems.decorator';
import { AdminOnly } from './admin.guard';
import { AdminMcpService } from './admin-mcp.service';
import {
  AdminMcpServerDto,
  AdminMcpServerListDto,
  CreateMcpServerDto,
  McpServerReasonDto,
  UpdateMcpServerDto,
} from './dto/admin-mcp.dto';

@AdminOnly()
@Controller('admin/mcp-servers')
export class AdminMcpController {
  constructor(private readonly mcp: AdminMcpService) {}

  @Get()
  @ApiOperation({ summary: 'MCP servers, with the tools each listed last' })
  @ApiOkResponse({ type: AdminMcpServerListDto })
  list(): Promise<AdminMcpServerListDto> {
    return this.mcp.list();
  }

  @Post()
  @ApiOperation({
    summary:
      'Register an MCP server (Streamable HTTP); its tools are read before the answer',
  })
  @ApiCreatedResponse({ type: AdminMcpServerDto })
  @ApiProblems(400, 409)
  create(
    @CurrentUser() admin: SessionUser,
    @Body() body: CreateMcpServerDto,
  ): Promise<AdminMcpServerDto> {
    return this.mcp.create(admin, body);
  }

  @Get(':id')
  @ApiOperation({ summary: 'One MCP server' })
  @ApiOkResponse({ type: AdminMcpServerDto })
  @ApiProblems(404)
  get(@Param('id') id: string): Promise<AdminMcpServerDto> {
    return this.mcp.get(id);
  }

  @Patch(':id')
  @ApiOperation({
    summary:
      'Change an MCP server; given headers replace all of them (null removes them)',
  })
  @ApiOkResponse({ type: AdminMcpServerDto })
  @ApiProblems(400, 404, 409)
  update(
    @CurrentUser() admin: SessionUser,
    @Param('id') id: string,
    @Body() body: UpdateMcpServerDto,
  ): Promise<AdminMcpServerDto> {
    return this.mcp.update(admin, id, body);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({
    summary: 'Remove an MCP server: its tools are offered no more',
  })
  @ApiNoContentResponse()
  @ApiProblems(400, 404)
  async remove(
    @CurrentUser() admin: SessionUser,
    @Param('id') id: string,
    @Body() body: McpServerReasonDto,
  ): Promise<void> {
    await this.mcp.remove(admin, id, body.reason);
  }

  @Post(':id/refresh')
  @HttpCode(200)
  @ApiOperation({
    summary:
      "Read the server's tools now (a failure is kept in toolsError, the old tools stay)",
  })
  @ApiOkResponse({ type: AdminMcpServerDto })
  @ApiProblems(404)
  refresh(@Param('id') id: string): Promise<AdminMcpServerDto> {
    return this.mcp.refresh(id);
  }
}
