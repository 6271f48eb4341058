import { Body, Controller, HttpCode, Param, Post } from '@nestjs/common';
import {
  ApiOkResponse,
  ApiOperation,
  ApiProperty,
  ApiTags,
} from '@nestjs/swagger';
import { IsIn } from 'class-validator';
import { CurrentUser } from '../../auth/current-user.decorator';
import { SessionUser } from '../../auth/session-user';
import { ApiProblems } from '../../common/openapi/api-problems.decorator';
import { ApprovalDecision, ToolApprovals } from './tool-approvals.service';

export class ApprovalDecisionDto {
  @ApiProperty({ enum: ['approve', 'deny'] })
  @IsIn(['approve', 'deny'], { message: 'decision must be approve or deny' })
  decision!: 'approve' | 'deny';
}

export class ApprovalDecisionResponseDto implements ApprovalDecision {
  @ApiProperty({ format: 'uuid' })
  approvalId!: string;

  @ApiProperty({ enum: ['approved', 'denied'] })
  status!: 'approved' | 'denied';
}

@ApiTags('chat')
@Controller('chat/approvals')
export class ApprovalsController {
  constructor(private readonly approvals: ToolApprovals) {}

  @Post(':approvalId')
  @HttpCode(200)
  @ApiOperation({
    summary:
      'Approve or deny a tool call a run is waiting on (its tool_approval event)',
    description:
      'Only the run’s owner; the run goes on at once on whichever instance runs it. 404 for an ' +
      'approval not yours; 409 once it was decided or expired (an expired one was denied).',
  })
  @ApiOkResponse({ type: ApprovalDecisionResponseDto })
  @ApiProblems(400, 401, 404, 409)
  decide(
    @CurrentUser() user: SessionUser,
    @Param('approvalId') approvalId: string,
    @Body() body: ApprovalDecisionDto,
  ): Promise<ApprovalDecisionResponseDto> {
    return this.approvals.decide(user, approvalId, body.decision);
  }
}
