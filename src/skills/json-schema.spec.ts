import { schemaProblems, valueProblems } from './json-schema';

describe('JSON Schema (draft 2020-12)', () => {
  it('accepts valid schemas, including booleans, $defs references and unknown keywords', () => {
    expect(
      schemaProblems('input_schema', {
        type: 'object',
        properties: { text: { type: 'string' } },
        required: ['text'],
      }),
    ).toEqual([]);
    expect(schemaProblems('input_schema', true)).toEqual([]);
    expect(
      schemaProblems('input_schema', {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        $defs: { s: { type: 'string' } },
        $ref: '#/$defs/s',
      }),
    ).toEqual([]);
    expect(
      schemaProblems('input_schema', { type: 'string', 'x-ui': 'textarea' }),
    ).toEqual([]);
  });

  it('names what makes a schema invalid', () => {
    expect(schemaProblems('input_schema', { type: 'strnig' })[0]).toEqual(
      expect.objectContaining({ field: 'input_schema.type' }),
    );
    expect(schemaProblems('input_schema', { minLength: -1 })[0].field).toBe(
      'input_schema.minLength',
    );
    expect(schemaProblems('output_schema', 'string')[0]).toEqual(
      expect.objectContaining({
        field: 'output_schema',
        code: 'invalid_json_schema',
      }),
    );
    expect(schemaProblems('input_schema', [])[0].code).toBe(
      'invalid_json_schema',
    );
    expect(
      schemaProblems('input_schema', { $ref: '#/$defs/missing' })[0].code,
    ).toBe('invalid_json_schema');
    expect(
      schemaProblems('input_schema', {
        $ref: 'https://example.com/remote.json',
      })[0].code,
    ).toBe('invalid_json_schema');
    expect(
      schemaProblems('input_schema', {
        $schema: 'http://json-schema.org/draft-07/schema#',
      })[0].message,
    ).toContain('2020-12');
    expect(
      schemaProblems('input_schema', { description: 'x'.repeat(40_000) })[0]
        .code,
    ).toBe('schema_too_large');
  });

  it('lets two users use the same $id', () => {
    const schema = { $id: 'https://example.com/same', type: 'string' };
    expect(schemaProblems('input_schema', schema)).toEqual([]);
    expect(
      schemaProblems('input_schema', { ...schema, type: 'number' }),
    ).toEqual([]);
  });

  it('reports every value error with its path', () => {
    const schema = {
      type: 'object',
      properties: {
        text: { type: 'string' },
        n: { type: 'integer', minimum: 1 },
      },
      required: ['text'],
    };
    const problems = valueProblems('input', schema, { n: 0 }, 'v1');
    expect(
      problems.map((problem) => [problem.field, problem.code]).sort(),
    ).toEqual([
      ['input', 'required'],
      ['input.n', 'minimum'],
    ]);
    expect(valueProblems('input', schema, { text: 'ok' }, 'v1')).toEqual([]);
  });

  it('refuses $async, numbers JSON cannot carry and oversized structures', () => {
    expect(
      schemaProblems('input_schema', { $async: true, type: 'string' })[0],
    ).toEqual(
      expect.objectContaining({
        field: 'input_schema.$async',
        code: 'invalid_json_schema',
      }),
    );
    expect(
      schemaProblems('input_schema', { properties: { a: { $async: true } } })[0]
        .field,
    ).toBe('input_schema.properties.a.$async');
    expect(
      schemaProblems('input_schema', { type: 'number', maximum: Infinity })[0],
    ).toEqual(expect.objectContaining({ field: 'input_schema.maximum' }));
    const wide = { anyOf: Array.from({ length: 2_100 }, () => ({})) };
    expect(schemaProblems('input_schema', wide)[0].code).toBe(
      'schema_too_complex',
    );
  });

  it('cannot be broken for everyone by a schema claiming the meta-schema $id', () => {
    const hostile = {
      $id: 'https://json-schema.org/draft/2020-12/schema',
      type: 'string',
    };
    schemaProblems('input_schema', hostile);
    expect(schemaProblems('input_schema', { type: 'string' })).toEqual([]);
    expect(schemaProblems('input_schema', { type: 'strnig' })[0].field).toBe(
      'input_schema.type',
    );
  });

  it('does not let Object.prototype satisfy required', () => {
    expect(
      valueProblems(
        'input',
        { type: 'object', required: ['constructor'] },
        {},
        'proto',
      )[0].code,
    ).toBe('required');
  });
});
