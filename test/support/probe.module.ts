import { Body, Controller, Get, Module, Post } from '@nestjs/common';
import { ApiCreatedResponse } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { Public } from '../../src/common/decorators/public.decorator';
import {
  IsEmail,
  IsInt,
  IsString,
  Max,
  Min,
  MinLength,
  ValidateNested,
} from 'class-validator';

class ProbeAddressDto {
  @IsString()
  city!: string;
}

class ProbeBodyDto {
  @IsEmail()
  email!: string;

  @IsString()
  @MinLength(12)
  password!: string;

  @IsInt()
  @Min(1)
  @Max(10)
  count!: number;

  @ValidateNested()
  @Type(() => ProbeAddressDto)
  address!: ProbeAddressDto;
}

/**
 * Routes mounted only by the tests that prove the global plumbing (validation pipe, error filter,
 * logging) on a route with a body and on an unexpected failure; the feature routes use the same plumbing.
 */
@Public()
@Controller('test-probe')
class ProbeController {
  @Post()
  @ApiCreatedResponse({
    schema: {
      type: 'object',
      properties: { ok: { type: 'boolean' }, count: { type: 'integer' } },
      required: ['ok', 'count'],
    },
  })
  accept(@Body() body: ProbeBodyDto): { ok: true; count: number } {
    return { ok: true, count: body.count };
  }

  @Get('crash')
  crash(): never {
    throw new Error(
      'SELECT password_hash FROM "User" WHERE email = \'leak@example.com\'\n    at Object.<anonymous> (secret.ts:1:1)',
    );
  }
}

@Module({ controllers: [ProbeController] })
export class ProbeModule {}
