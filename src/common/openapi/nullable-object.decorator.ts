import { Type } from '@nestjs/common';
import {
  ApiProperty,
  ApiPropertyOptions,
  getSchemaPath,
} from '@nestjs/swagger';

/**
 * A property holding an object of `type`, or null. OpenAPI 3.0 cannot say this with `nullable` beside a
 * `$ref` (or `allOf: [$ref]`): `nullable` only widens a `type` in the same schema, so validators refuse
 * null there. The portable form is a choice between the object and a schema admitting only null.
 * The class must also be registered (ApiExtraModels or used elsewhere) so that its $ref resolves.
 */
export function ApiNullableObjectProperty(
  type: Type,
  options: Pick<ApiPropertyOptions, 'description'> = {},
): PropertyDecorator {
  // Not an object literal of ApiPropertyOptions: its union has no member for `type: 'object'` with only
  // `anyOf` and a `required` flag, though the schema is valid OpenAPI.
  const schema: Record<string, unknown> = {
    ...options,
    // A plain `object` type keeps the Swagger CLI plugin from adding its own `allOf: [$ref]` (Nest then
    // drops it beside `anyOf`). The plugin's `nullable: true`, left without a `type`, is removed from the
    // document by buildOpenApiDocument: the null is admitted by the second choice.
    type: 'object',
    required: true,
    anyOf: [
      { $ref: getSchemaPath(type) },
      { type: 'object', nullable: true, enum: [null] },
    ],
  };
  return ApiProperty(schema);
}
