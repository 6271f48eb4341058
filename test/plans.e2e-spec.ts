import { bootTestApp, TestApp } from './support/test-app';

describe('GET /v1/plans', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await bootTestApp();
  });
  afterAll(() => t.close());

  it('lists the four default plans publicly, in catalog order, with prices and models', async () => {
    const res = await t.http.get('/v1/plans').expect(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const plans = res.body.data as {
      id: string;
      code: string;
      checkoutAllowed: boolean;
      models: { id: string }[];
    }[];
    expect(plans.map((plan) => plan.code)).toEqual([
      'free',
      'pro',
      'team',
      'enterprise',
    ]);
    const pro = res.body.data[1];
    expect(pro).toEqual({
      id: 'pro',
      code: 'pro',
      name: 'Pro',
      price: { amount: 2000, currency: 'USD', interval: 'month' },
      dailyCredits: 2000,
      checkoutAllowed: true,
      models: expect.any(Array),
    });
    // `id` is the planId POST /v1/billing/checkout takes (the billing suites check the checkout with it).
    expect(plans.map((plan) => plan.id)).toEqual([
      'free',
      'pro',
      'team',
      'enterprise',
    ]);
    expect(plans.map((plan) => plan.checkoutAllowed)).toEqual([
      false,
      true,
      true,
      false,
    ]);
    for (const plan of plans) {
      const ids = plan.models.map((model) => model.id);
      expect(ids).toEqual(
        expect.arrayContaining(['local/echo', 'openai/gpt-4o-mini']),
      );
    }
    expect(plans[0].models[0]).toEqual({
      id: 'local/echo',
      name: 'Echo (built-in)',
      price: { perRequest: 1, per1kInputTokens: 0, per1kOutputTokens: 0 },
    });
  });
});
