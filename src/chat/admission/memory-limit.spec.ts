import { memoryLimitBytes } from './memory-limit';

const GiB = 1024 ** 3;

describe('memoryLimitBytes', () => {
  it("takes the operator's figure first", () => {
    expect(memoryLimitBytes(512 * 1024 ** 2, GiB, 8 * GiB)).toEqual({
      bytes: 512 * 1024 ** 2,
      source: 'configured',
    });
  });

  it("takes the container's limit when there is one", () => {
    expect(memoryLimitBytes(undefined, GiB, 8 * GiB)).toEqual({
      bytes: GiB,
      source: 'container',
    });
  });

  it("takes the machine's memory when the cgroup has no limit (a huge number, 0 or none)", () => {
    for (const constrained of [2 ** 64, 0, undefined])
      expect(memoryLimitBytes(undefined, constrained, 8 * GiB)).toEqual({
        bytes: 8 * GiB,
        source: 'machine',
      });
  });

  it('never takes a container limit above the machine', () => {
    expect(memoryLimitBytes(undefined, 16 * GiB, 8 * GiB).bytes).toBe(8 * GiB);
  });
});
