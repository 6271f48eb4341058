import { canonicalJson, fingerprintOf } from './fingerprint';

describe('fingerprint', () => {
  it('ignores key order at every level', () => {
    expect(
      canonicalJson({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: null } }),
    ).toBe('{"a":{"c":null,"d":[1,{"x":1,"y":2}]},"b":1}');
    expect(
      fingerprintOf({ model: 'm', messages: [{ role: 'user', content: 'x' }] }),
    ).toBe(
      fingerprintOf({ messages: [{ content: 'x', role: 'user' }], model: 'm' }),
    );
  });

  it('differs when any value differs', () => {
    const base = {
      model: 'm',
      messages: [{ role: 'user', content: 'x' }],
      conversationId: null,
    };
    expect(fingerprintOf(base)).not.toBe(
      fingerprintOf({ ...base, model: 'n' }),
    );
    expect(fingerprintOf(base)).not.toBe(
      fingerprintOf({ ...base, messages: [{ role: 'user', content: 'y' }] }),
    );
    expect(fingerprintOf(base)).not.toBe(
      fingerprintOf({ ...base, conversationId: 'c' }),
    );
  });

  it('treats an absent field like an undefined one', () => {
    expect(fingerprintOf({ a: 1, b: undefined })).toBe(fingerprintOf({ a: 1 }));
  });
});
