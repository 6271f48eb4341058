import { ApiNullableObjectProperty } from '../../../common/openapi/nullable-object.decorator';
import { MessageFeedbackDto } from '../../../feedback/dto/message-feedback.dto';
import {
  LedgerStepDto,
  LedgerToolCallDto,
} from '../../../ledger/dto/ledger-entry.response';
import { ToolCallDto } from '../../../tools/dto/tool-call.dto';
import { ApiExtraModels, ApiProperty } from '@nestjs/swagger';
import { FILE_KINDS, FileKind } from '../../../files/file-kind';

/*
 * The account export document (GET /v1/auth/me/export), as documented in OpenAPI. The service builds the
 * same shape with streamed arrays in place of the long lists (AccountExportDocument), so the two stay in step.
 * Times are ISO 8601 UTC; credit grant days are `YYYY-MM-DD`.
 */

export class AccountExportPlanDto {
  @ApiProperty({ example: 'free' })
  code!: string;

  @ApiProperty({ example: 'Free' })
  name!: string;
}

/** A Google or GitHub account linked for sign-in. */
export class AccountExportIdentityDto {
  @ApiProperty({ enum: ['google', 'github'] })
  provider!: 'google' | 'github';

  /** The email the provider reported at linking, if any. */
  @ApiProperty({ nullable: true, type: String })
  email!: string | null;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;
}

export class AccountExportAccountDto {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  email!: string;

  @ApiProperty({ enum: ['user', 'admin'] })
  role!: 'user' | 'admin';

  plan!: AccountExportPlanDto;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;

  emailVerified!: boolean;

  twoFactorEnabled!: boolean;

  identities!: AccountExportIdentityDto[];
}

export class AccountExportSkillVersionDto {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  number!: number;

  instruction!: string;

  /** JSON Schema of the run input, or null. */
  @ApiProperty({ type: 'object', nullable: true, additionalProperties: true })
  inputSchema!: unknown;

  /** JSON Schema of the answer, or null. */
  @ApiProperty({ type: 'object', nullable: true, additionalProperties: true })
  outputSchema!: unknown;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;
}

export class AccountExportSkillDto {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  name!: string;

  latestVersion!: number;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;

  @ApiProperty({ format: 'date-time' })
  updatedAt!: string;

  /** Every version, oldest first (versions are never changed once written). */
  versions!: AccountExportSkillVersionDto[];
}

@ApiExtraModels(MessageFeedbackDto)
export class AccountExportMessageDto {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  /** The message this one follows; messages form a tree (regenerated and edited turns are branches). */
  @ApiProperty({ format: 'uuid', nullable: true, type: String })
  parentId!: string | null;

  @ApiProperty({ enum: ['system', 'user', 'assistant'] })
  role!: 'system' | 'user' | 'assistant';

  content!: string;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;

  /** On answers: the tools their run called, in order; empty otherwise. */
  toolCalls!: ToolCallDto[];

  /** On answers: your rating of it; null when unrated and on other messages. */
  @ApiNullableObjectProperty(MessageFeedbackDto)
  feedback!: MessageFeedbackDto | null;
}

export class AccountExportConversationDto {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  title!: string;

  @ApiProperty({ format: 'uuid', nullable: true, type: String })
  skillId!: string | null;

  @ApiProperty({ format: 'uuid', nullable: true, type: String })
  skillVersionId!: string | null;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;

  @ApiProperty({ format: 'date-time' })
  updatedAt!: string;

  @ApiProperty({ format: 'date-time', nullable: true, type: String })
  archivedAt!: string | null;

  /** The last message of the branch shown; null while empty. */
  @ApiProperty({ format: 'uuid', nullable: true, type: String })
  currentMessageId!: string | null;

  /** Every message of every branch, in the order they were stored. */
  messages!: AccountExportMessageDto[];
}

export class AccountExportFileDto {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  name!: string;

  @ApiProperty({ enum: FILE_KINDS })
  kind!: FileKind;

  mediaType!: string;

  sizeBytes!: number;

  /** Hex SHA-256 of the content: check a downloaded copy against it. */
  sha256!: string;

  @ApiProperty({ enum: ['pending', 'ready', 'failed'] })
  textStatus!: 'pending' | 'ready' | 'failed';

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;

  /** Where to download the bytes (GET, same session), relative to the API's base URL. */
  @ApiProperty({
    example: '/v1/files/0190c2d4-0000-7000-8000-000000000000/content',
  })
  contentUrl!: string;
}

export class AccountExportLedgerEntryDto {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ enum: ['usage', 'grant'] })
  kind!: 'usage' | 'grant';

  @ApiProperty({ enum: ['completed', 'partial', 'failed', 'granted'] })
  status!: 'completed' | 'partial' | 'failed' | 'granted';

  /** The model billed: the one that answered (a fallback, when the model asked for did not). */
  @ApiProperty({ nullable: true, type: String, example: 'local/echo' })
  modelId!: string | null;

  /** The model asked for when a fallback answered; null otherwise. */
  @ApiProperty({
    nullable: true,
    type: String,
    example: 'anthropic/claude-haiku-4-5',
  })
  requestedModelId!: string | null;

  @ApiProperty({ format: 'uuid', nullable: true, type: String })
  conversationId!: string | null;

  @ApiProperty({ format: 'uuid', nullable: true, type: String })
  skillId!: string | null;

  @ApiProperty({ format: 'uuid', nullable: true, type: String })
  skillVersionId!: string | null;

  /** The credit grant (in `creditGrants`) a `grant` entry records. */
  @ApiProperty({ format: 'uuid', nullable: true, type: String })
  creditGrantId!: string | null;

  /** The organization whose pool paid for the run; null when the account's own quota did. */
  @ApiProperty({ format: 'uuid', nullable: true, type: String })
  organizationId!: string | null;

  inputTokens!: number;

  /** Of inputTokens, those the provider read from its prompt cache (priced apart); 0 for grants. */
  cachedInputTokens!: number;

  outputTokens!: number;

  credits!: number;

  /** A run that used tools: each model call's tokens; empty otherwise. */
  steps!: LedgerStepDto[];

  /** A run that used tools: its tool calls and how each ended; empty otherwise. */
  toolCalls!: LedgerToolCallDto[];

  @ApiProperty({ nullable: true, type: String })
  reason!: string | null;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;
}

export class AccountExportCreditGrantDto {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  /** Extra credits per day, on each day of the range. */
  credits!: number;

  @ApiProperty({ format: 'date', example: '2026-01-01' })
  firstDay!: string;

  @ApiProperty({ format: 'date', example: '2026-01-31' })
  lastDay!: string;

  reason!: string;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;
}

export class AccountExportSubscriptionDto {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ example: 'pro' })
  planCode!: string;

  @ApiProperty({ enum: ['stripe', 'paddle'] })
  provider!: 'stripe' | 'paddle';

  /** The subscription's id at the provider (as on its receipts). */
  providerSubscriptionId!: string;

  @ApiProperty({
    enum: ['active', 'past_due', 'canceled', 'incomplete', 'paused'],
  })
  status!: 'active' | 'past_due' | 'canceled' | 'incomplete' | 'paused';

  @ApiProperty({ format: 'date-time', nullable: true, type: String })
  currentPeriodEnd!: string | null;

  cancelAtPeriodEnd!: boolean;

  @ApiProperty({ format: 'date-time', nullable: true, type: String })
  canceledAt!: string | null;

  /** The checkout (in `checkouts`) it was bought through. */
  @ApiProperty({ format: 'uuid', nullable: true, type: String })
  checkoutId!: string | null;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;

  @ApiProperty({ format: 'date-time' })
  updatedAt!: string;
}

export class AccountExportCheckoutDto {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ example: 'pro' })
  planCode!: string;

  @ApiProperty({ enum: ['stripe', 'paddle'] })
  provider!: 'stripe' | 'paddle';

  @ApiProperty({ enum: ['pending', 'completed', 'expired', 'failed'] })
  status!: 'pending' | 'completed' | 'expired' | 'failed';

  /** Price in minor units of `currency`. */
  amount!: number;

  @ApiProperty({ example: 'EUR' })
  currency!: string;

  @ApiProperty({ enum: ['month', 'year'], nullable: true, type: String })
  interval!: 'month' | 'year' | null;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;

  @ApiProperty({ format: 'date-time', nullable: true, type: String })
  completedAt!: string | null;
}

/** Everything the account holds, in one document. Lists are newest first, except versions and messages (stored order). */
/** An organization the account belongs to. */
export class AccountExportMembershipDto {
  @ApiProperty({ format: 'uuid' })
  organizationId!: string;

  name!: string;

  @ApiProperty({ enum: ['owner', 'admin', 'member'] })
  role!: 'owner' | 'admin' | 'member';

  /** The account's own daily cap in the organization's pool; null: none. */
  @ApiProperty({ type: 'integer', nullable: true })
  dailyCreditLimit!: number | null;

  @ApiProperty({ format: 'date-time' })
  joinedAt!: string;
}

export class AccountExportDto {
  @ApiProperty({
    example: 'chat-backend.account-export/1',
    description: 'Name and major version of this format.',
  })
  format!: string;

  @ApiProperty({ format: 'date-time' })
  exportedAt!: string;

  account!: AccountExportAccountDto;

  /** The organizations the account belongs to, with its role. */
  memberships!: AccountExportMembershipDto[];

  skills!: AccountExportSkillDto[];

  conversations!: AccountExportConversationDto[];

  /** File records; each file's bytes are at its `contentUrl`. */
  files!: AccountExportFileDto[];

  /** Credits used by runs and added by grants. */
  ledger!: AccountExportLedgerEntryDto[];

  creditGrants!: AccountExportCreditGrantDto[];

  subscriptions!: AccountExportSubscriptionDto[];

  checkouts!: AccountExportCheckoutDto[];
}
