import { Injectable } from '@nestjs/common';
import { SessionUser } from '../../auth/session-user';
import { Clock } from '../../common/clock';
import { AppError } from '../../common/errors/app-error';
import { Cursor } from '../../common/pagination';
import { PagedArray } from './json-stream.writer';
import { keysetArray } from './keyset-pages';
import { AccountExportRepository } from './account-export.repository';
import {
  AccountExportAccountDto,
  AccountExportCheckoutDto,
  AccountExportConversationDto,
  AccountExportCreditGrantDto,
  AccountExportFileDto,
  AccountExportLedgerEntryDto,
  AccountExportMessageDto,
  AccountExportMembershipDto,
  AccountExportSkillDto,
  AccountExportSkillVersionDto,
  AccountExportSubscriptionDto,
} from './dto/account-export.response';
import {
  toAccount,
  toCheckout,
  toConversation,
  toCreditGrant,
  toFile,
  toLedgerEntry,
  toMessage,
  toSkill,
  toSkillVersion,
  toSubscription,
} from './account-export.mappers';

/** Name and major version of the document: a consumer can tell what it parses; a breaking change bumps it. */
export const ACCOUNT_EXPORT_FORMAT = 'chat-backend.account-export/1';

export type ExportedSkill = Omit<AccountExportSkillDto, 'versions'> & {
  versions: PagedArray<AccountExportSkillVersionDto>;
};
export type ExportedConversation = Omit<
  AccountExportConversationDto,
  'messages'
> & { messages: PagedArray<AccountExportMessageDto> };

/** AccountExportDto with its lists still to be read: what the JSON writer streams. */
export interface AccountExportDocument {
  format: string;
  exportedAt: string;
  account: AccountExportAccountDto;
  memberships: AccountExportMembershipDto[];
  skills: PagedArray<ExportedSkill>;
  conversations: PagedArray<ExportedConversation>;
  files: PagedArray<AccountExportFileDto>;
  ledger: PagedArray<AccountExportLedgerEntryDto>;
  creditGrants: PagedArray<AccountExportCreditGrantDto>;
  subscriptions: PagedArray<AccountExportSubscriptionDto>;
  checkouts: PagedArray<AccountExportCheckoutDto>;
}

export interface AccountExport {
  fileName: string;
  document: AccountExportDocument;
}

const newestFirstKey = (row: { createdAt: Date; id: string }): Cursor => ({
  at: row.createdAt,
  id: row.id,
});

// docs/adr/0025-account-export.md
@Injectable()
export class AccountExportService {
  constructor(
    private readonly repository: AccountExportRepository,
    private readonly clock: Clock,
  ) {}

  /**
   * The caller's data as one document. The account is read now, so a failure here is still an ordinary error
   * answer; every list is read page by page only while the document is written, and only the caller's rows.
   */
  async exportAccount(user: SessionUser): Promise<AccountExport> {
    const account = await this.repository.findAccount(user.id);
    if (!account)
      throw new AppError(
        'unauthenticated',
        'The account of this session no longer exists.',
      );
    const memberships = await this.repository.findMemberships(user.id);
    const exportedAt = this.clock.now();
    return {
      fileName: `account-export-${exportedAt.toISOString().slice(0, 10)}.json`,
      document: {
        format: ACCOUNT_EXPORT_FORMAT,
        exportedAt: exportedAt.toISOString(),
        account: toAccount(account),
        memberships: memberships.map((row) => ({
          organizationId: row.organizationId,
          name: row.organization.name,
          role: row.role,
          dailyCreditLimit: row.dailyCreditLimit,
          joinedAt: row.createdAt.toISOString(),
        })),
        skills: this.skills(user.id),
        conversations: this.conversations(user.id),
        files: keysetArray(
          (after, limit) =>
            this.repository.findFilesPage(user.id, after, limit),
          newestFirstKey,
          toFile,
        ),
        ledger: keysetArray(
          (after, limit) =>
            this.repository.findLedgerPage(user.id, after, limit),
          newestFirstKey,
          toLedgerEntry,
        ),
        creditGrants: keysetArray(
          (after, limit) =>
            this.repository.findCreditGrantsPage(user.id, after, limit),
          newestFirstKey,
          toCreditGrant,
        ),
        subscriptions: keysetArray(
          (after, limit) =>
            this.repository.findSubscriptionsPage(user.id, after, limit),
          newestFirstKey,
          toSubscription,
        ),
        checkouts: keysetArray(
          (after, limit) =>
            this.repository.findCheckoutsPage(user.id, after, limit),
          newestFirstKey,
          toCheckout,
        ),
      },
    };
  }

  private skills(ownerId: string): PagedArray<ExportedSkill> {
    return keysetArray(
      (after, limit) => this.repository.findSkillsPage(ownerId, after, limit),
      newestFirstKey,
      (row): ExportedSkill => ({
        ...toSkill(row),
        versions: keysetArray(
          (after: number | undefined, limit: number) =>
            this.repository.findSkillVersionsPage(
              ownerId,
              row.id,
              after,
              limit,
            ),
          (version) => version.number,
          toSkillVersion,
        ),
      }),
    );
  }

  private conversations(userId: string): PagedArray<ExportedConversation> {
    return keysetArray(
      (after, limit) =>
        this.repository.findConversationsPage(userId, after, limit),
      newestFirstKey,
      (row): ExportedConversation => ({
        ...toConversation(row),
        messages: keysetArray(
          (after: bigint | undefined, limit: number) =>
            this.repository.findMessagesPage(userId, row.id, after, limit),
          (message) => message.seq,
          toMessage,
        ),
      }),
    );
  }
}
