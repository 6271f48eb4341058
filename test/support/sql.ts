import { Client } from 'pg';

/** Runs one query on the suite's database (or `url`) and answers its rows: for arranging and checking state. */
export async function sql<T = Record<string, unknown>>(
  query: string,
  values: unknown[] = [],
  url = process.env.TEST_DATABASE_URL,
): Promise<T[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(query, values)).rows as T[];
  } finally {
    await client.end();
  }
}
