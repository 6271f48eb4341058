/**
 * The environment's variables as the catalog's endpoints read them (keys, base URLs: docs/adr/0063). The
 * values sit in a private field, so the object never shows them: JSON.stringify, a logger or an error
 * report of the configuration sees `{}`. Empty values count as unset, as everywhere in the configuration.
 */
export class Environment {
  readonly #values: ReadonlyMap<string, string>;

  constructor(source: NodeJS.ProcessEnv) {
    this.#values = new Map(
      Object.entries(source).filter(
        (entry): entry is [string, string] =>
          typeof entry[1] === 'string' && entry[1].trim() !== '',
      ),
    );
  }

  get(name: string): string | undefined {
    return this.#values.get(name);
  }

  toJSON(): Record<string, never> {
    return {};
  }
}
