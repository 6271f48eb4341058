import { Controller, Get, Res } from '@nestjs/common';
import {
  ApiOkResponse,
  ApiOperation,
  ApiProduces,
  ApiTags,
} from '@nestjs/swagger';
import { Response } from 'express';
import { CurrentUser } from '../../auth/current-user.decorator';
import { SessionUser } from '../../auth/session-user';
import { AppLogger } from '../../common/logging/app-logger';
import { ApiProblems } from '../../common/openapi/api-problems.decorator';
import { RateLimit } from '../../common/rate-limit/rate-limit.decorator';
import { AccountExportService } from './account-export.service';
import { AccountExportDto } from './dto/account-export.response';
import { sendJsonAttachment } from './json-attachment';

const DOWNLOAD_HEADERS = {
  'Content-Disposition': {
    description: '`attachment; filename="account-export-YYYY-MM-DD.json"`',
    schema: { type: 'string' as const },
  },
  'Cache-Control': {
    description: '`no-store`',
    schema: { type: 'string' as const },
  },
};

@ApiTags('auth')
@Controller('auth')
export class AccountExportController {
  constructor(
    private readonly exports: AccountExportService,
    private readonly log: AppLogger,
  ) {}

  @RateLimit('export-user')
  @Get('me/export')
  @ApiOperation({
    summary:
      'Download everything the account holds as one JSON document (data portability, GDPR art. 20)',
    description:
      'The account, Skills with every version, conversations with every message, file records, ledger, credit grants, subscriptions and checkouts. ' +
      'Streamed while it is read, however large the account. File contents are not inlined: download each at its `contentUrl`. ' +
      'A download that breaks off (the connection closes without the final chunk) is incomplete: request it again.',
  })
  @ApiProduces('application/json')
  @ApiOkResponse({
    type: AccountExportDto,
    description: 'The export document, as an attachment.',
    headers: DOWNLOAD_HEADERS,
  })
  // 429 is documented by @RateLimit (listing it here too would repeat its description).
  @ApiProblems(401)
  async export(
    @CurrentUser() user: SessionUser,
    @Res() res: Response,
  ): Promise<void> {
    const exported = await this.exports.exportAccount(user);
    await sendJsonAttachment(
      res,
      exported.fileName,
      exported.document,
      this.log,
    );
  }
}
