import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiNoContentResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { Public } from '../../common/decorators/public.decorator';
import { ApiProblems } from '../../common/openapi/api-problems.decorator';
import { RateLimit } from '../../common/rate-limit/rate-limit.decorator';
import { CurrentUser } from '../current-user.decorator';
import { MessageDto } from '../dto/message.response';
import { SessionUser } from '../session-user';
import { VerifyEmailDto } from './verify-email.dto';
import { EmailVerificationService } from './email-verification.service';

@ApiTags('auth')
@Controller('auth')
export class EmailVerificationController {
  constructor(private readonly verification: EmailVerificationService) {}

  @Public()
  @RateLimit('verify-email-ip')
  @Post('verify-email')
  @HttpCode(204)
  @ApiOperation({
    summary:
      'Verify the account’s email with the token of a verification link (no session needed)',
  })
  @ApiNoContentResponse({ description: 'The email is verified.' })
  @ApiProblems(400, 429)
  verify(@Body() body: VerifyEmailDto): Promise<void> {
    return this.verification.verify(body.token);
  }

  @RateLimit('resend-verification-user')
  @Post('resend-verification')
  @HttpCode(202)
  @ApiOperation({
    summary:
      'Mail a new verification link to the signed-in account (earlier links keep working until used or expired)',
  })
  @ApiAcceptedResponse({ type: MessageDto })
  @ApiProblems(401, 409, 429)
  async resend(@CurrentUser() user: SessionUser): Promise<MessageDto> {
    await this.verification.resend(user);
    return { message: `A verification link was sent to ${user.email}.` };
  }
}
