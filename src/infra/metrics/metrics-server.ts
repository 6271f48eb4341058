import {
  createServer,
  IncomingMessage,
  Server,
  ServerResponse,
} from 'node:http';
import { AddressInfo } from 'node:net';
import {
  Inject,
  Injectable,
  OnApplicationBootstrap,
  OnModuleDestroy,
} from '@nestjs/common';
import { AppLogger } from '../../common/logging/app-logger';
import { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { Metrics } from './metrics';
import { PrometheusMetrics } from './prometheus-metrics';

export const METRICS_PATH = '/metrics';

/**
 * The Prometheus listener: a plain node:http server on HOST:METRICS_PORT, apart from the API (no session,
 * middleware or rate limit in front of it, and nothing of it reachable through the API's port). It
 * serves `GET /metrics` only. Started once the app is initialised, so a port already taken fails the start;
 * closed with the app, after the HTTP drain, so the drain itself can still be watched. Without METRICS_PORT
 * nothing listens.
 */
@Injectable()
export class MetricsServer implements OnApplicationBootstrap, OnModuleDestroy {
  private server: Server | undefined;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly metrics: Metrics,
    private readonly log: AppLogger,
  ) {}

  /** Where it listens; undefined when it does not (METRICS_PORT unset, or closed). */
  get address(): AddressInfo | undefined {
    const address = this.server?.listening ? this.server.address() : null;
    return address !== null && typeof address === 'object'
      ? address
      : undefined;
  }

  async onApplicationBootstrap(): Promise<void> {
    const port = this.config.metrics.port;
    const metrics = this.metrics;
    if (port === undefined || !(metrics instanceof PrometheusMetrics)) return;
    const server = createServer((req, res) => void answer(metrics, req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ port, host: this.config.http.host }, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
    this.log.info(
      { url: `http://${this.config.http.host}:${port}${METRICS_PATH}` },
      'metrics listening',
    );
  }

  /** A scrape in flight is cut rather than waited for: Prometheus keeps its connection open between scrapes. */
  async onModuleDestroy(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    const closed = new Promise<void>((resolve) =>
      server.close(() => resolve()),
    );
    server.closeAllConnections();
    await closed;
  }
}

async function answer(
  metrics: PrometheusMetrics,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const path = (req.url ?? '').split('?', 1)[0];
  if (path !== METRICS_PATH)
    return plain(res, 404, 'Not Found: the metrics are at /metrics\n');
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('Allow', 'GET, HEAD');
    return plain(res, 405, 'Method Not Allowed\n');
  }
  try {
    const { contentType, body } = await metrics.exposition();
    res.writeHead(200, {
      'Content-Type': contentType,
      'Cache-Control': 'no-store',
    });
    res.end(req.method === 'HEAD' ? undefined : body);
  } catch (error) {
    plain(
      res,
      500,
      `metrics could not be collected: ${error instanceof Error ? error.message : String(error)}\n`,
    );
  }
}

function plain(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8' });
  res.end(text);
}
