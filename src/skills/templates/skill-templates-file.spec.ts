import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadSkillTemplatesFile } from './skill-templates-file';

function fileWith(content: unknown): string {
  const file = join(
    mkdtempSync(join(tmpdir(), 'templates-')),
    'templates.json',
  );
  writeFileSync(
    file,
    typeof content === 'string' ? content : JSON.stringify(content),
  );
  return file;
}

const valid = {
  id: 'summarize',
  name: 'Summarize',
  description: 'd',
  instruction: 'i',
};

describe('skill templates file', () => {
  it('loads the shipped file: at least five templates with valid schemas', () => {
    const templates = loadSkillTemplatesFile('config/skill-templates.json');
    expect(templates.length).toBeGreaterThanOrEqual(5);
  });

  it('names every bad entry', () => {
    const file = fileWith({
      templates: [
        valid,
        { ...valid, input_schema: { type: 'strnig' } },
        { ...valid, id: 'Bad Id', extra: 1 },
      ],
    });
    const message = (() => {
      try {
        loadSkillTemplatesFile(file);
        return '';
      } catch (error) {
        return (error as Error).message;
      }
    })();
    expect(message).toContain('templates.1 (summarize): duplicate id');
    expect(message).toContain('templates.1 (summarize).input_schema.type');
    expect(message).toContain('templates.2.id');
    expect(message).toContain('extra');
  });

  it('refuses a file that is not JSON', () => {
    expect(() => loadSkillTemplatesFile(fileWith('{'))).toThrow(
      /Invalid skill templates file/,
    );
  });
});
