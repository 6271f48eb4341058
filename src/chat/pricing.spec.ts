import {
  creditsFor,
  estimateInputTokens,
  ModelPrice,
  reservationFor,
  settledCredits,
} from './pricing';

const metered: ModelPrice = {
  creditsPerRequest: 0,
  creditsPer1kInput: 1,
  creditsPer1kOutput: 4,
  creditsPer1kCachedInput: null,
  maxOutputTokens: 4096,
};
const flat: ModelPrice = {
  creditsPerRequest: 1,
  creditsPer1kInput: 0,
  creditsPer1kOutput: 0,
  creditsPer1kCachedInput: null,
  maxOutputTokens: 2048,
};

describe('pricing', () => {
  it('estimates input tokens from UTF-8 bytes plus a per-message overhead', () => {
    expect(estimateInputTokens([{ role: 'user', content: 'abcdef' }])).toBe(
      2 + 4,
    );
    // Three bytes per CJK character: one token each.
    expect(
      estimateInputTokens([
        { role: 'user', content: '日本語' },
        { role: 'system', content: '' },
      ]),
    ).toBe(3 + 8);
  });

  it('rounds each side up to a whole credit and adds the per-request price', () => {
    expect(creditsFor(metered, 1, 1)).toBe(2);
    expect(creditsFor(metered, 1000, 250)).toBe(2);
    expect(creditsFor(metered, 1001, 251)).toBe(4);
    expect(creditsFor(flat, 10_000, 10_000)).toBe(1);
  });

  it('reserves for the estimated input and the maximum output', () => {
    expect(reservationFor(metered, 100)).toBe(1 + 17);
    expect(reservationFor(flat, 100)).toBe(1);
  });

  it('never settles above the reservation', () => {
    expect(settledCredits(metered, 5, 100_000, 100_000)).toBe(5);
    expect(settledCredits(metered, 18, 10, 10)).toBe(2);
  });
});

describe('cached input', () => {
  const cachedCheaper: ModelPrice = {
    ...metered,
    creditsPer1kInput: 10,
    creditsPer1kCachedInput: 1,
  };

  it('prices the cached part of the input at its own price, the rest at the input price', () => {
    // 1000 uncached x 10 + 3000 cached x 1 = 13000 / 1000 = 13; 500 output x 4 = 2.
    expect(creditsFor(cachedCheaper, 4000, 500, 3000)).toBe(15);
    expect(creditsFor(cachedCheaper, 4000, 500)).toBe(42);
  });

  it('prices cached input as other input when the model has no cached price', () => {
    expect(creditsFor(metered, 4000, 500, 3000)).toBe(
      creditsFor(metered, 4000, 500),
    );
  });

  it('never counts more cached tokens than input tokens, nor fewer than none', () => {
    expect(creditsFor(cachedCheaper, 1000, 0, 5000)).toBe(1);
    expect(creditsFor(cachedCheaper, 1000, 0, -5)).toBe(10);
  });

  it('settles cached runs below the reservation, never above it', () => {
    expect(settledCredits(cachedCheaper, 100, 4000, 500, 3000)).toBe(15);
    expect(settledCredits(cachedCheaper, 10, 4000, 500, 3000)).toBe(10);
  });
});
