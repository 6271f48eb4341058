import { FEEDBACK } from '../../feedback/dto/message-feedback.dto';
import { TOOL_CALLS } from '../../tools/dto/tool-call.dto';
import { Injectable } from '@nestjs/common';
import { Cursor, olderThan } from '../../common/pagination';
import { PrismaService } from '../../infra/prisma/prisma.service';

/*
 * What the export reads. Every selection is an allow-list: secrets (password hash, TOTP secret, session,
 * reset and verification token hashes, recovery codes), storage keys, provider checkout URLs and other
 * people's ids (the admin who granted credits) are never selected, so they cannot leak into the document.
 *
 * Top-level collections are read newest first by (createdAt, id): unique, never changed after insert, and
 * the order of the matching indexes. Messages follow `seq` and Skill versions their number.
 */

const ACCOUNT = {
  id: true,
  email: true,
  role: true,
  createdAt: true,
  emailVerifiedAt: true,
  totpEnabledAt: true,
  plan: { select: { code: true, name: true } },
  // One per linked provider account: a handful at most, read with the account.
  identities: {
    orderBy: { createdAt: 'asc' },
    select: { provider: true, email: true, createdAt: true },
  },
} as const;

const SKILL = {
  id: true,
  name: true,
  latestVersion: true,
  createdAt: true,
  updatedAt: true,
} as const;
const SKILL_VERSION = {
  id: true,
  number: true,
  instruction: true,
  inputSchema: true,
  outputSchema: true,
  createdAt: true,
} as const;
const CONVERSATION = {
  id: true,
  title: true,
  skillId: true,
  skillVersionId: true,
  archivedAt: true,
  currentMessageId: true,
  createdAt: true,
  updatedAt: true,
} as const;
const MESSAGE = {
  seq: true,
  id: true,
  parentId: true,
  role: true,
  content: true,
  createdAt: true,
  copiedFrom: true,
  feedback: { select: FEEDBACK },
  chatRequest: {
    select: {
      toolExecutions: TOOL_CALLS,
    },
  },
} as const;
const FILE = {
  id: true,
  originalName: true,
  kind: true,
  mediaType: true,
  sizeBytes: true,
  sha256: true,
  textStatus: true,
  createdAt: true,
} as const;
const LEDGER_ENTRY = {
  id: true,
  kind: true,
  status: true,
  modelId: true,
  conversationId: true,
  skillId: true,
  skillVersionId: true,
  creditGrantId: true,
  organizationId: true,
  inputTokens: true,
  cachedInputTokens: true,
  outputTokens: true,
  credits: true,
  requestedModelId: true,
  steps: true,
  toolCalls: true,
  reason: true,
  createdAt: true,
} as const;
const CREDIT_GRANT = {
  id: true,
  credits: true,
  firstDay: true,
  lastDay: true,
  reason: true,
  createdAt: true,
} as const;
const SUBSCRIPTION = {
  id: true,
  planCode: true,
  provider: true,
  providerSubscriptionId: true,
  status: true,
  currentPeriodEnd: true,
  cancelAtPeriodEnd: true,
  canceledAt: true,
  checkoutId: true,
  createdAt: true,
  updatedAt: true,
} as const;
const CHECKOUT = {
  id: true,
  planCode: true,
  provider: true,
  status: true,
  amount: true,
  currency: true,
  interval: true,
  createdAt: true,
  completedAt: true,
} as const;

const NEWEST_FIRST = [{ createdAt: 'desc' }, { id: 'desc' }] as const;

@Injectable()
export class AccountExportRepository {
  constructor(private readonly prisma: PrismaService) {}

  // Each method answers a plain Promise (async), not Prisma's lazy one: callers and tests see ordinary rows.

  /** The account with its plan and linked sign-in providers; null once it was erased. */
  async findAccount(userId: string) {
    return this.prisma.user.findFirst({
      where: { id: userId, deletedAt: null },
      select: ACCOUNT,
    });
  }

  /** The organizations the account belongs to (few: read at once). */
  findMemberships(userId: string) {
    return this.prisma.orgMember.findMany({
      where: { userId },
      orderBy: [{ createdAt: 'asc' }, { organizationId: 'asc' }],
      select: {
        organizationId: true,
        role: true,
        dailyCreditLimit: true,
        createdAt: true,
        organization: { select: { name: true } },
      },
    });
  }

  async findSkillsPage(
    ownerId: string,
    after: Cursor | undefined,
    limit: number,
  ) {
    return this.prisma.skill.findMany({
      where: { ownerId, ...olderThan('createdAt', after) },
      orderBy: [...NEWEST_FIRST],
      take: limit,
      select: SKILL,
    });
  }

  /** Versions of one of the owner's Skills, oldest first, after version number `after`. */
  async findSkillVersionsPage(
    ownerId: string,
    skillId: string,
    after: number | undefined,
    limit: number,
  ) {
    return this.prisma.skillVersion.findMany({
      where: {
        skillId,
        skill: { ownerId },
        ...(after === undefined ? {} : { number: { gt: after } }),
      },
      orderBy: { number: 'asc' },
      take: limit,
      select: SKILL_VERSION,
    });
  }

  async findConversationsPage(
    userId: string,
    after: Cursor | undefined,
    limit: number,
  ) {
    return this.prisma.conversation.findMany({
      where: { userId, ...olderThan('createdAt', after) },
      orderBy: [...NEWEST_FIRST],
      take: limit,
      select: CONVERSATION,
    });
  }

  /** Messages (every branch) of one of the user's conversations, in the order they were stored, after `seq`. */
  async findMessagesPage(
    userId: string,
    conversationId: string,
    after: bigint | undefined,
    limit: number,
  ) {
    return this.prisma.message.findMany({
      where: {
        conversationId,
        conversation: { userId },
        ...(after === undefined ? {} : { seq: { gt: after } }),
      },
      orderBy: { seq: 'asc' },
      take: limit,
      select: MESSAGE,
    });
  }

  async findFilesPage(
    ownerId: string,
    after: Cursor | undefined,
    limit: number,
  ) {
    return this.prisma.file.findMany({
      where: { ownerId, ...olderThan('createdAt', after) },
      orderBy: [...NEWEST_FIRST],
      take: limit,
      select: FILE,
    });
  }

  async findLedgerPage(
    userId: string,
    after: Cursor | undefined,
    limit: number,
  ) {
    return this.prisma.ledgerEntry.findMany({
      where: { userId, ...olderThan('createdAt', after) },
      orderBy: [...NEWEST_FIRST],
      take: limit,
      select: LEDGER_ENTRY,
    });
  }

  async findCreditGrantsPage(
    userId: string,
    after: Cursor | undefined,
    limit: number,
  ) {
    return this.prisma.creditGrant.findMany({
      where: { userId, ...olderThan('createdAt', after) },
      orderBy: [...NEWEST_FIRST],
      take: limit,
      select: CREDIT_GRANT,
    });
  }

  async findSubscriptionsPage(
    userId: string,
    after: Cursor | undefined,
    limit: number,
  ) {
    return this.prisma.subscription.findMany({
      where: { userId, ...olderThan('createdAt', after) },
      orderBy: [...NEWEST_FIRST],
      take: limit,
      select: SUBSCRIPTION,
    });
  }

  async findCheckoutsPage(
    userId: string,
    after: Cursor | undefined,
    limit: number,
  ) {
    return this.prisma.checkout.findMany({
      where: { userId, ...olderThan('createdAt', after) },
      orderBy: [...NEWEST_FIRST],
      take: limit,
      select: CHECKOUT,
    });
  }
}

type Rows<Method extends (...args: never[]) => Promise<unknown>> = Awaited<
  ReturnType<Method>
>;
type RowOf<Method extends (...args: never[]) => Promise<unknown[]>> =
  Rows<Method>[number];

export type AccountRow = NonNullable<
  Rows<AccountExportRepository['findAccount']>
>;
export type SkillRow = RowOf<AccountExportRepository['findSkillsPage']>;
export type SkillVersionRow = RowOf<
  AccountExportRepository['findSkillVersionsPage']
>;
export type ConversationRow = RowOf<
  AccountExportRepository['findConversationsPage']
>;
export type MessageRow = RowOf<AccountExportRepository['findMessagesPage']>;
export type FileRow = RowOf<AccountExportRepository['findFilesPage']>;
export type LedgerRow = RowOf<AccountExportRepository['findLedgerPage']>;
export type CreditGrantRow = RowOf<
  AccountExportRepository['findCreditGrantsPage']
>;
export type SubscriptionRow = RowOf<
  AccountExportRepository['findSubscriptionsPage']
>;
export type CheckoutRow = RowOf<AccountExportRepository['findCheckoutsPage']>;
