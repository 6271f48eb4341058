import { Global, Module } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { Metrics, NO_METRICS } from './metrics';
import { MetricsServer } from './metrics-server';
import { PrometheusMetrics } from './prometheus-metrics';

/**
 * `Metrics` for every feature: a prom-client registry served by MetricsServer when METRICS_PORT is set,
 * else the no-op implementation (no registry, no listener, no per-request work).
 */
@Global()
@Module({
  providers: [
    {
      provide: Metrics,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig): Metrics =>
        config.metrics.port === undefined
          ? NO_METRICS
          : new PrometheusMetrics(),
    },
    MetricsServer,
  ],
  exports: [Metrics, MetricsServer],
})
export class MetricsModule {}
