import { PrometheusMetrics } from './prometheus-metrics';

async function samples(metrics: PrometheusMetrics): Promise<string[]> {
  return (await metrics.exposition()).body
    .split('\n')
    .filter((line) => line && !line.startsWith('#'));
}

describe('PrometheusMetrics', () => {
  it('has a registry of its own: two instances count apart', async () => {
    const a = new PrometheusMetrics();
    const b = new PrometheusMetrics();
    a.quotaRefused('free');
    expect(await samples(a)).toContain(
      'chat_quota_refusals_total{plan="free"} 1',
    );
    expect(
      (await samples(b)).some((line) =>
        line.startsWith('chat_quota_refusals_total{'),
      ),
    ).toBe(false);
  });

  it('counts a run by model and outcome and adds its usage to the tokens', async () => {
    const metrics = new PrometheusMetrics();
    metrics.runFinished('openai/gpt-4o', {
      status: 'completed',
      usage: { inputTokens: 12, outputTokens: 30 },
    });
    metrics.runFinished('openai/gpt-4o', {
      status: 'failed',
      errorCode: 'provider_timeout',
    });
    metrics.runFinished('openai/gpt-4o', {
      status: 'stopped',
      usage: { inputTokens: 3, outputTokens: 0 },
    });
    const lines = await samples(metrics);
    expect(lines).toEqual(
      expect.arrayContaining([
        'chat_runs_total{model="openai/gpt-4o",outcome="completed"} 1',
        'chat_runs_total{model="openai/gpt-4o",outcome="provider_timeout"} 1',
        'chat_runs_total{model="openai/gpt-4o",outcome="stopped"} 1',
        'chat_tokens_total{direction="input",model="openai/gpt-4o"} 15',
        'chat_tokens_total{direction="output",model="openai/gpt-4o"} 30',
      ]),
    );
  });

  it('records the time to the first token once per call', async () => {
    const metrics = new PrometheusMetrics();
    const mark = metrics.firstTokenTimer('openai', 'openai/gpt-4o');
    mark();
    mark();
    expect(await samples(metrics)).toContain(
      'chat_provider_time_to_first_token_seconds_count{provider="openai",model="openai/gpt-4o"} 1',
    );
  });

  it('observes responses in seconds by method, route and status', async () => {
    const metrics = new PrometheusMetrics();
    metrics.httpResponse('GET', '/v1/plans', 200, 3);
    metrics.httpResponse('GET', '/v1/plans', 200, 40);
    metrics.httpResponse('GET', '/v1/plans', 304, 1);
    const lines = await samples(metrics);
    expect(lines).toContain(
      'http_request_duration_seconds_count{method="GET",route="/v1/plans",status="200"} 2',
    );
    expect(lines).toContain(
      'http_request_duration_seconds_bucket{le="0.005",method="GET",route="/v1/plans",status="200"} 1',
    );
    expect(lines).toContain(
      'http_request_duration_seconds_count{method="GET",route="/v1/plans",status="304"} 1',
    );
  });

  it('reads the live streams and the database pool when scraped', async () => {
    const metrics = new PrometheusMetrics();
    let live = 2;
    metrics.observeLiveStreams(() => live);
    metrics.observeDatabasePool(() => ({
      total: 7,
      idle: 3,
      waiting: 5,
      max: 10,
    }));
    expect(await samples(metrics)).toEqual(
      expect.arrayContaining([
        'chat_live_streams 2',
        'db_pool_connections_in_use 4',
        'db_pool_connections_idle 3',
        'db_pool_waiting_queries 5',
        'db_pool_connections_max 10',
      ]),
    );
    live = 0;
    expect(await samples(metrics)).toContain('chat_live_streams 0');
  });

  it('counts webhooks by provider and outcome and rate-limit refusals by rule', async () => {
    const metrics = new PrometheusMetrics();
    metrics.webhook('paddle', 'duplicate');
    metrics.rateLimited('two-factor-user');
    metrics.rateLimited('two-factor-user');
    const lines = await samples(metrics);
    expect(lines).toContain(
      'billing_webhook_events_total{provider="paddle",outcome="duplicate"} 1',
    );
    expect(lines).toContain(
      'rate_limit_refusals_total{rule="two-factor-user"} 2',
    );
  });
});
