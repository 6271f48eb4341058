import {
  ApiExtraModels,
  ApiProperty,
  ApiPropertyOptional,
} from '@nestjs/swagger';
import { ApiNullableObjectProperty } from '../../common/openapi/nullable-object.decorator';
import { IsOptional, IsString, MaxLength } from 'class-validator';
import { PageQueryDto } from '../../common/pagination';

export class AuditQueryDto extends PageQueryDto {
  /** Only entries about this target (a user id, a template id...). */
  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @MaxLength(200)
  targetId?: string;
}

export class AuditAdminDto {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  email!: string;
}

@ApiExtraModels(AuditAdminDto)
export class AuditEntryDto {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  /** Who did it; null for changes made by the service itself (ADMIN_EMAILS at start). */
  @ApiNullableObjectProperty(AuditAdminDto)
  admin!: AuditAdminDto | null;

  /** `user.plan`, `user.disable`, `user.enable`, `user.role`... */
  @ApiProperty({ example: 'user.plan' })
  action!: string;

  @ApiProperty({ example: 'user' })
  targetType!: string;

  targetId!: string;

  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true })
  before!: unknown;

  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true })
  after!: unknown;

  @ApiProperty({ type: String, nullable: true })
  reason!: string | null;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;
}

export class AuditPageDto {
  data!: AuditEntryDto[];

  @ApiProperty({ type: String, nullable: true })
  nextCursor!: string | null;
}
