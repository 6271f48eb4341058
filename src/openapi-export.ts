import { NestFactory } from '@nestjs/core';
import pino from 'pino';
import { AppModule } from './app.module';
import { API_PREFIX } from './app.factory';
import { buildOpenApiDocument } from './common/openapi/setup-openapi';
import { loadConfig } from './config/load-config';

/**
 * Prints the OpenAPI document, as /docs-json serves it, without a database or any other service: Nest's
 * preview mode scans the modules and controllers but instantiates no provider. `node dist/openapi-export.js`
 * (compiled, so the Swagger CLI plugin has described the DTOs); the web client's types are generated from it.
 */
async function main(): Promise<void> {
  const config = loadConfig({ NODE_ENV: 'development' });
  const app = await NestFactory.create(
    AppModule.forRoot(config, pino({ level: 'silent' })),
    { preview: true, logger: false, abortOnError: false },
  );
  app.setGlobalPrefix(API_PREFIX);
  const document = buildOpenApiDocument(app, {
    cookieName: config.session.cookieName,
  });
  process.stdout.write(`${JSON.stringify(document, null, 2)}\n`);
  await app.close();
}

void main();
