import {
  Inject,
  Injectable,
  OnModuleDestroy,
  OnModuleInit,
} from '@nestjs/common';
import { Client, Notification } from 'pg';
import { AppLogger } from '../../common/logging/app-logger';
import { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';

/** What a committed change made stale (see the migration that defines the triggers). */
export type Change =
  { kind: 'user'; userId: string } | { kind: 'catalog' } | { kind: 'all' };

export type ChangeListener = (change: Change) => void;

/** The channel the triggers notify on. */
const CHANNEL = 'app_changes';
const RECONNECT_MIN_MS = 250;
const RECONNECT_MAX_MS = 5_000;

function parseChange(payload: string | undefined): Change {
  if (payload === 'catalog') return { kind: 'catalog' };
  if (payload?.startsWith('user:'))
    return { kind: 'user', userId: payload.slice(5) };
  return { kind: 'all' };
}

/**
 * PostgreSQL's change notifications, heard on one dedicated connection (LISTEN app_changes). Triggers
 * notify when a committed change makes cached sessions, users or the catalog stale, on whichever instance
 * made it (or an operator's SQL), so every instance drops the stale entries when the notification arrives.
 *
 * While the connection is down nothing can be heard: `live` is false and caches must not answer from
 * memory. On every (re)connect listeners get `all`, since anything may have changed in between.
 * docs/adr/0032-caches-and-change-notifications.md
 */
@Injectable()
export class ChangeFeed implements OnModuleInit, OnModuleDestroy {
  private client: Client | undefined;
  private listening = false;
  private closed = false;
  private reconnectDelayMs = RECONNECT_MIN_MS;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private readonly listeners = new Set<ChangeListener>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly log: AppLogger,
  ) {}

  /** True while notifications can be heard: only then may a cache answer from memory. */
  get live(): boolean {
    return this.listening;
  }

  onChange(listener: ChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async onModuleInit(): Promise<void> {
    await this.connect();
  }

  async onModuleDestroy(): Promise<void> {
    this.closed = true;
    clearTimeout(this.reconnectTimer);
    this.setListening(false);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const client = new Client({
      connectionString: this.config.database.url,
      connectionTimeoutMillis: 5_000,
      application_name: 'chat-api change feed',
    });
    this.client = client;
    client.on('notification', (message: Notification) =>
      this.emit(parseChange(message.payload)),
    );
    client.on('error', (error: Error) => this.lost(client, error));
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
    } catch (error) {
      this.lost(client, error);
      return;
    }
    if (this.client !== client) return;
    this.reconnectDelayMs = RECONNECT_MIN_MS;
    this.setListening(true);
  }

  private lost(client: Client, error?: unknown): void {
    if (this.client !== client) return;
    this.client = undefined;
    this.setListening(false);
    client.end().catch(() => undefined);
    if (this.closed) return;
    this.log.warn(
      { err: error, retryInMs: this.reconnectDelayMs },
      'database change feed lost: caches are bypassed until it is back',
    );
    this.reconnectTimer = setTimeout(
      () => void this.connect(),
      this.reconnectDelayMs,
    );
    this.reconnectTimer.unref();
    this.reconnectDelayMs = Math.min(
      RECONNECT_MAX_MS,
      this.reconnectDelayMs * 2,
    );
  }

  private setListening(listening: boolean): void {
    if (this.listening === listening) return;
    this.listening = listening;
    // Either way what is cached can no longer be trusted: it may have changed while nobody listened.
    this.emit({ kind: 'all' });
  }

  private emit(change: Change): void {
    for (const listener of this.listeners) {
      try {
        listener(change);
      } catch (error) {
        this.log.error({ err: error }, 'a change listener failed');
      }
    }
  }
}
