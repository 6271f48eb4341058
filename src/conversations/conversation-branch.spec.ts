import { currentBranch } from './conversation-branch';

const m = (id: string, parentId: string | null) => ({ id, parentId });

describe('currentBranch', () => {
  // q1 ─ a1 ─ q2 ─ a2
  //               └ a2b        (regenerated)
  // q1b ─ a1b                  (q1 edited)
  const tree = [
    m('q1', null),
    m('a1', 'q1'),
    m('q2', 'a1'),
    m('a2', 'q2'),
    m('a2b', 'q2'),
    m('q1b', null),
    m('a1b', 'q1b'),
  ];

  it('walks from the current message to the first, with the alternatives of each message', () => {
    expect(
      currentBranch(tree, 'a2').map(({ message, alternatives }) => [
        message.id,
        alternatives,
      ]),
    ).toEqual([
      ['q1', ['q1', 'q1b']],
      ['a1', []],
      ['q2', []],
      ['a2', ['a2', 'a2b']],
    ]);
    expect(currentBranch(tree, 'a1b').map(({ message }) => message.id)).toEqual(
      ['q1b', 'a1b'],
    );
  });

  it('ends at the last stored message without a current one, and is empty without messages', () => {
    expect(currentBranch(tree, null).map(({ message }) => message.id)).toEqual([
      'q1b',
      'a1b',
    ]);
    expect(
      currentBranch(tree, 'unknown').map(({ message }) => message.id),
    ).toEqual(['q1b', 'a1b']);
    expect(currentBranch([], null)).toEqual([]);
  });

  it('stops at a loop instead of walking forever (data written outside the application)', () => {
    expect(
      currentBranch([m('x', 'y'), m('y', 'x')], 'x').map(
        ({ message }) => message.id,
      ),
    ).toEqual(['y', 'x']);
  });
});
