import { takeOpenApiViolations } from './openapi-responses';

/**
 * Fails the test during which a test app sent a response its OpenAPI document does not describe
 * (openapi-responses.ts); responses sent in a beforeAll count for the file's first test.
 */
function failOnViolations(): void {
  const found = takeOpenApiViolations();
  if (found.length > 0)
    throw new Error(
      `${found.length} response(s) disagree with the OpenAPI document:\n- ${found.join('\n- ')}`,
    );
}

afterEach(failOnViolations);
afterAll(failOnViolations);
