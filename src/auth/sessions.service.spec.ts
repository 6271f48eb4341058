import { AppLogger } from '../common/logging/app-logger';
import { AppConfig } from '../config/app-config';
import { ChangeFeed } from '../infra/database/change-feed';
import { SessionsRepository } from './sessions.repository';
import { SessionsService } from './sessions.service';

const TOKEN = 't'.repeat(43);
const NOW = new Date('2026-11-27T12:00:00Z');

/** A live session row as SessionsRepository.findLiveSession answers it; `reads` counts the lookups. */
function repository() {
  const state = { reads: 0, found: true };
  const sessions = {
    findLiveSession: () => {
      state.reads += 1;
      return Promise.resolve(
        state.found
          ? {
              id: 's-1',
              createdAt: NOW,
              expiresAt: new Date(NOW.getTime() + 86_400_000),
              lastSeenAt: NOW,
              user: {
                id: 'u-1',
                email: 'a@example.com',
                role: 'user',
                createdAt: NOW,
                disabledAt: null,
                emailVerifiedAt: NOW,
                totpEnabledAt: null,
                plan: { code: 'free', name: 'Free' },
              },
            }
          : null,
      );
    },
    touchSession: () => Promise.resolve(),
  } as unknown as SessionsRepository;
  return { sessions, state };
}

function service(sessions: SessionsRepository): SessionsService {
  const config = { session: { cacheTtlMs: 60_000 } } as AppConfig;
  const clock = { now: () => NOW };
  const changes = {
    live: true,
    onChange: () => undefined,
  } as unknown as ChangeFeed;
  return new SessionsService(config, sessions, clock, changes, {} as AppLogger);
}

describe('SessionsService.authenticate', () => {
  it('reads an unknown session from the database (a promise), then answers it from the cache synchronously', async () => {
    const { sessions, state } = repository();
    const auth = service(sessions);
    const first = auth.authenticate(TOKEN);
    expect(first).toBeInstanceOf(Promise);
    expect(await first).toMatchObject({ id: 'u-1', planCode: 'free' });
    const second = auth.authenticate(TOKEN);
    expect(second).not.toBeInstanceOf(Promise);
    expect(second).toMatchObject({ id: 'u-1', email: 'a@example.com' });
    expect(state.reads).toBe(1);
  });

  it('answers null for a session the database does not have', async () => {
    const { sessions, state } = repository();
    state.found = false;
    await expect(service(sessions).authenticate(TOKEN)).resolves.toBeNull();
  });
});
