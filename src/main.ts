import { environmentWithDotEnv } from './config/dotenv';
import { ConfigError, loadConfig } from './config/load-config';
import { startTracing } from './infra/telemetry/tracing';

/**
 * The entry point. Only the configuration and the tracing switch are loaded before tracing starts: the
 * instrumentations patch http, express, pg, ioredis and undici as they are loaded, so the server is
 * required after it.
 */
function main(): void {
  const { env, config } = readConfigOrExit();
  const tracing = startTracing(config.telemetry, env);
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- after startTracing, on purpose
  const { bootstrap } = require('./server') as typeof import('./server');
  void bootstrap(config, tracing);
}

function readConfigOrExit(): {
  env: NodeJS.ProcessEnv;
  config: ReturnType<typeof loadConfig>;
} {
  try {
    const env = environmentWithDotEnv();
    return { env, config: loadConfig(env) };
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

main();
