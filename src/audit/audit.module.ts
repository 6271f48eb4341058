import { Module } from '@nestjs/common';
import { AuditRepository } from './audit.repository';

/** The audit log's writer and reader: admins' actions, and every membership, role, seat and plan change. */
@Module({ providers: [AuditRepository], exports: [AuditRepository] })
export class AuditModule {}
