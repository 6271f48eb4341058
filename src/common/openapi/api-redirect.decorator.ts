import { ApiFoundResponse } from '@nestjs/swagger';

/**
 * A 302 to `Location`. Express' `res.redirect` also writes a one-line note naming the target, as text/plain
 * or, for a browser asking for HTML, text/html; clients follow the header and ignore it.
 */
export function ApiRedirectResponse(description: string): MethodDecorator {
  const note = {
    schema: {
      type: 'string' as const,
      description: 'A note naming the target (may be empty).',
    },
  };
  return ApiFoundResponse({
    description,
    headers: {
      Location: {
        description: 'Where the browser goes next.',
        schema: { type: 'string' },
      },
    },
    content: { 'text/plain': note, 'text/html': note },
  });
}
