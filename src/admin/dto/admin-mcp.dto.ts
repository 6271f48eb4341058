import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  IsBoolean,
  IsIn,
  IsOptional,
  IsString,
  Matches,
  MaxLength,
  ValidateIf,
} from 'class-validator';
import { RawJson } from '../../common/validation/raw-json';
import { AuditReasonDto } from './audit-reason.dto';

export const MCP_SERVER_NAME = /^[a-z0-9-]{1,32}$/;
const POLICIES = ['auto', 'confirm'] as const;
const MAX_HEADERS = 20;
const MAX_HEADER_VALUE = 4_096;
/** An HTTP field name (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/;
/** Headers the transport sets itself: an admin's value would break the protocol or the connection. */
const RESERVED_HEADERS = new Set([
  'host',
  'content-length',
  'content-type',
  'accept',
  'connection',
  'transfer-encoding',
  'mcp-session-id',
  'mcp-protocol-version',
  'last-event-id',
]);
/** Names that would shadow an object's own members wherever the headers are handled as one. */
const OBJECT_KEYS = new Set(['__proto__', 'constructor', 'prototype']);
const MCP_TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

/** Why `headers` is not acceptable, or null: an object of at most 20 header names to string values. */
export function checkHeaders(value: unknown): string | null {
  if (value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value))
    return 'headers must be an object of header names to string values';
  const entries = Object.entries(value);
  if (entries.length > MAX_HEADERS)
    return `headers may hold at most ${MAX_HEADERS} headers`;
  const seen = new Set<string>();
  for (const [name, header] of entries) {
    if (!HEADER_NAME.test(name) || OBJECT_KEYS.has(name))
      return `headers.${name} is not a valid HTTP header name`;
    const lower = name.toLowerCase();
    if (RESERVED_HEADERS.has(lower))
      return `headers.${name} is set by the MCP transport and cannot be configured`;
    if (seen.has(lower)) return `headers.${name} is given twice`;
    seen.add(lower);
    if (typeof header !== 'string') return `headers.${name} must be a string`;
    if (header.length > MAX_HEADER_VALUE || /[\r\n\0]/.test(header))
      return `headers.${name} must be at most ${MAX_HEADER_VALUE} characters on one line`;
  }
  return null;
}

/** Why `toolPolicies` is not acceptable, or null: tool names to `auto` or `confirm`. */
export function checkToolPolicies(value: unknown): string | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return 'toolPolicies must be an object of tool names to "auto" or "confirm"';
  const entries = Object.entries(value);
  if (entries.length > 200) return 'toolPolicies may name at most 200 tools';
  for (const [name, policy] of entries) {
    if (!MCP_TOOL_NAME.test(name) || OBJECT_KEYS.has(name))
      return `toolPolicies.${name} is not a valid MCP tool name`;
    if (policy !== 'auto' && policy !== 'confirm')
      return `toolPolicies.${name} must be "auto" or "confirm"`;
  }
  return null;
}

/** Why `toolPrices` is not acceptable, or null: tool names to whole credits per call (0 to 1,000,000). */
export function checkToolPrices(value: unknown): string | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return 'toolPrices must be an object of tool names to credits per call';
  const entries = Object.entries(value);
  if (entries.length > 200) return 'toolPrices may name at most 200 tools';
  for (const [name, price] of entries) {
    if (!MCP_TOOL_NAME.test(name) || OBJECT_KEYS.has(name))
      return `toolPrices.${name} is not a valid MCP tool name`;
    if (
      !Number.isInteger(price) ||
      (price as number) < 0 ||
      (price as number) > 1_000_000
    )
      return `toolPrices.${name} must be a whole number of credits from 0 to 1000000`;
  }
  return null;
}

class McpServerSettingsDto extends AuditReasonDto {
  /** Header values are secrets: stored encrypted, never shown again (only their names). */
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
    example: { Authorization: 'Bearer sk-...' },
  })
  @RawJson({ check: checkHeaders })
  headers?: Record<string, string> | null;

  @ApiPropertyOptional({ default: true })
  @IsOptional()
  @IsBoolean()
  enabled?: boolean;

  /** Plan codes whose users may use its tools; empty or absent: every plan. */
  @ApiPropertyOptional({ type: [String], example: ['pro', 'team'] })
  @IsOptional()
  @IsString({ each: true })
  @ArrayMaxSize(50)
  plans?: string[];

  /** `auto` or `confirm` for all its tools; null: each tool's own policy or its annotations' default. */
  @ApiPropertyOptional({ enum: POLICIES, nullable: true })
  @ValidateIf((_, value) => value !== undefined && value !== null)
  @IsIn(POLICIES)
  approval?: 'auto' | 'confirm' | null;

  /** Per tool name, over the server's policy. */
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string', enum: [...POLICIES] },
    example: { delete_file: 'confirm' },
  })
  @RawJson({ check: checkToolPolicies })
  toolPolicies?: Record<string, 'auto' | 'confirm'>;

  /** Per tool name: credits charged per call that runs (0 when not listed). */
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'integer', minimum: 0 },
    example: { create_issue: 2 },
  })
  @RawJson({ check: checkToolPrices })
  toolPrices?: Record<string, number>;
}

export class CreateMcpServerDto extends McpServerSettingsDto {
  /** Part of its tools' ids (`mcp.<name>.<tool>`): a-z, 0-9 and dashes, 1 to 32 characters. */
  @ApiProperty({ example: 'github' })
  @IsString()
  @Matches(MCP_SERVER_NAME, {
    message: 'name must be a-z, 0-9 and dashes, 1 to 32 characters',
  })
  name!: string;

  /** Its Streamable HTTP endpoint; https outside development. */
  @ApiProperty({ example: 'https://mcp.example.com/mcp', maxLength: 2000 })
  @IsString()
  @MaxLength(2000)
  url!: string;
}

export class UpdateMcpServerDto extends McpServerSettingsDto {
  @ApiPropertyOptional({ example: 'github' })
  @IsOptional()
  @IsString()
  @Matches(MCP_SERVER_NAME, {
    message: 'name must be a-z, 0-9 and dashes, 1 to 32 characters',
  })
  name?: string;

  @ApiPropertyOptional({ maxLength: 2000 })
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  url?: string;
}

export class McpServerReasonDto extends AuditReasonDto {}

export class AdminMcpToolDto {
  /** The id users and Skills name it by. */
  @ApiProperty({ example: 'mcp.github.create_issue' })
  id!: string;

  name!: string;

  title!: string;

  description!: string;

  @ApiProperty({ type: 'object', additionalProperties: true })
  inputSchema!: Record<string, unknown>;

  /** The server's annotations. */
  readOnly!: boolean;

  destructive!: boolean;

  /** The policy in force for it. */
  @ApiProperty({ enum: POLICIES })
  approval!: 'auto' | 'confirm';

  /** Credits per call that runs. */
  price!: number;
}

export class AdminMcpServerDto {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  name!: string;

  url!: string;

  /** The names of its headers; their values are never shown. */
  headerNames!: string[];

  enabled!: boolean;

  plans!: string[];

  @ApiProperty({ enum: POLICIES, nullable: true, type: String })
  approval!: 'auto' | 'confirm' | null;

  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string', enum: [...POLICIES] },
  })
  toolPolicies!: Record<string, 'auto' | 'confirm'>;

  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'integer', minimum: 0 },
  })
  toolPrices!: Record<string, number>;

  /** Its tools as it listed them last. */
  tools!: AdminMcpToolDto[];

  /** When its tools were last read; null until a reading succeeds. */
  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  toolsReadAt!: string | null;

  /** Why the last reading failed; null once one succeeds. */
  @ApiProperty({ type: String, nullable: true })
  toolsError!: string | null;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;

  @ApiProperty({ format: 'date-time' })
  updatedAt!: string;
}

export class AdminMcpServerListDto {
  data!: AdminMcpServerDto[];
}
