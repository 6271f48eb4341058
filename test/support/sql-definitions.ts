import {
  definedObjects,
  definitionDrift as driftOf,
  readDefinitions,
} from '../../src/infra/prisma/sql-definitions';
import { sql } from './sql';

/** The functions and views the files of `dir` define (prisma/sql). */
export function definedInFiles(dir: string) {
  return definedObjects(readDefinitions(dir));
}

/** How the database at `databaseUrl` differs from the files of `dir`. */
export function definitionDrift(
  databaseUrl: string,
  dir: string,
): Promise<string[]> {
  return driftOf(
    <T>(text: string) => sql<T>(text, [], databaseUrl),
    readDefinitions(dir),
  );
}
