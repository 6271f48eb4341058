import { readCopiedMessage } from '../../conversations/copied-message';
import { toFeedbackDto } from '../../feedback/dto/message-feedback.dto';
import { runDetails } from '../../ledger/ledger.repository';
import { toolCallsOf } from '../../tools/dto/tool-call.dto';
import {
  AccountExportAccountDto,
  AccountExportCheckoutDto,
  AccountExportConversationDto,
  AccountExportCreditGrantDto,
  AccountExportFileDto,
  AccountExportLedgerEntryDto,
  AccountExportMessageDto,
  AccountExportSkillDto,
  AccountExportSkillVersionDto,
  AccountExportSubscriptionDto,
} from './dto/account-export.response';
import {
  AccountRow,
  CheckoutRow,
  ConversationRow,
  CreditGrantRow,
  FileRow,
  LedgerRow,
  MessageRow,
  SkillRow,
  SkillVersionRow,
  SubscriptionRow,
} from './account-export.repository';

/** Rows to the plain objects of the export document (field by field: nothing selected slips through by accident). */

const iso = (at: Date) => at.toISOString();
const isoOrNull = (at: Date | null) => (at === null ? null : at.toISOString());
/** A DATE column as its calendar day (it arrives as midnight UTC). */
const day = (at: Date) => at.toISOString().slice(0, 10);

export function toAccount(row: AccountRow): AccountExportAccountDto {
  return {
    id: row.id,
    email: row.email,
    role: row.role,
    plan: { code: row.plan.code, name: row.plan.name },
    createdAt: iso(row.createdAt),
    emailVerified: row.emailVerifiedAt !== null,
    twoFactorEnabled: row.totpEnabledAt !== null,
    identities: row.identities.map((identity) => ({
      provider: identity.provider,
      email: identity.email,
      createdAt: iso(identity.createdAt),
    })),
  };
}

export function toSkill(
  row: SkillRow,
): Omit<AccountExportSkillDto, 'versions'> {
  return {
    id: row.id,
    name: row.name,
    latestVersion: row.latestVersion,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
  };
}

export function toSkillVersion(
  row: SkillVersionRow,
): AccountExportSkillVersionDto {
  return {
    id: row.id,
    number: row.number,
    instruction: row.instruction,
    inputSchema: row.inputSchema,
    outputSchema: row.outputSchema,
    createdAt: iso(row.createdAt),
  };
}

export function toConversation(
  row: ConversationRow,
): Omit<AccountExportConversationDto, 'messages'> {
  return {
    id: row.id,
    title: row.title,
    skillId: row.skillId,
    skillVersionId: row.skillVersionId,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
    archivedAt: isoOrNull(row.archivedAt),
    currentMessageId: row.currentMessageId,
  };
}

export function toMessage(row: MessageRow): AccountExportMessageDto {
  return {
    id: row.id,
    parentId: row.parentId,
    role: row.role,
    content: row.content,
    createdAt: iso(row.createdAt),
    toolCalls: row.chatRequest
      ? toolCallsOf(row.role, row.chatRequest.toolExecutions)
      : (readCopiedMessage(row.copiedFrom)?.toolCalls ?? []),
    feedback: row.feedback ? toFeedbackDto(row.feedback) : null,
  };
}

export function toFile(row: FileRow): AccountExportFileDto {
  return {
    id: row.id,
    name: row.originalName,
    kind: row.kind,
    mediaType: row.mediaType,
    sizeBytes: row.sizeBytes,
    sha256: row.sha256,
    textStatus: row.textStatus,
    createdAt: iso(row.createdAt),
    // The bytes are not inlined (up to 20 MiB each): the existing download route serves them.
    contentUrl: `/v1/files/${row.id}/content`,
  };
}

export function toLedgerEntry(row: LedgerRow): AccountExportLedgerEntryDto {
  return {
    id: row.id,
    kind: row.kind,
    status: row.status,
    modelId: row.modelId,
    requestedModelId: row.requestedModelId,
    conversationId: row.conversationId,
    skillId: row.skillId,
    skillVersionId: row.skillVersionId,
    creditGrantId: row.creditGrantId,
    organizationId: row.organizationId,
    inputTokens: row.inputTokens,
    cachedInputTokens: row.cachedInputTokens,
    outputTokens: row.outputTokens,
    credits: row.credits,
    ...runDetails(row),
    reason: row.reason,
    createdAt: iso(row.createdAt),
  };
}

export function toCreditGrant(
  row: CreditGrantRow,
): AccountExportCreditGrantDto {
  return {
    id: row.id,
    credits: row.credits,
    firstDay: day(row.firstDay),
    lastDay: day(row.lastDay),
    reason: row.reason,
    createdAt: iso(row.createdAt),
  };
}

export function toSubscription(
  row: SubscriptionRow,
): AccountExportSubscriptionDto {
  return {
    id: row.id,
    planCode: row.planCode,
    provider: row.provider,
    providerSubscriptionId: row.providerSubscriptionId,
    status: row.status,
    currentPeriodEnd: isoOrNull(row.currentPeriodEnd),
    cancelAtPeriodEnd: row.cancelAtPeriodEnd,
    canceledAt: isoOrNull(row.canceledAt),
    checkoutId: row.checkoutId,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
  };
}

export function toCheckout(row: CheckoutRow): AccountExportCheckoutDto {
  return {
    id: row.id,
    planCode: row.planCode,
    provider: row.provider,
    status: row.status,
    amount: row.amount,
    currency: row.currency,
    interval: row.interval,
    createdAt: iso(row.createdAt),
    completedAt: isoOrNull(row.completedAt),
  };
}
