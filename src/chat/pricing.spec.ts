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
  maxOutputTokens: 4096,
};
const flat: ModelPrice = {
  creditsPerRequest: 1,
  creditsPer1kInput: 0,
  creditsPer1kOutput: 0,
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
