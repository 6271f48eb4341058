import { z } from 'zod';
import { AppError } from '../../common/errors/app-error';

/** Parses the part of a verified payload we read; anything else is a 400 naming the fields (nothing changes). */
export function parsePayload<T>(
  schema: z.ZodType<T>,
  value: unknown,
  what: string,
): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const errors = result.error.issues.map((issue) => ({
    field: issue.path.map(String).join('.') || '(body)',
    code: issue.code,
    message: issue.message,
  }));
  throw new AppError(
    'webhook_payload_invalid',
    `The ${what} does not have the fields this service reads.`,
    { errors },
  );
}

/** An id of the provider's objects (evt_, cs_, sub_, txn_...): bounded, printable. */
export const providerId = z
  .string()
  .regex(/^[\x21-\x7e]{1,255}$/, 'must be a provider id');

export function unixSeconds(value: number): Date {
  return new Date(value * 1000);
}
