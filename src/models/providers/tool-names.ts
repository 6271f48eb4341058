/**
 * A tool id as a name the providers accept on the wire: `^[a-zA-Z0-9_-]{1,64}$` at OpenAI and Anthropic
 * alike, while tool ids hold dots (`files.search` becomes `files_search`).
 */
export function wireNameOf(toolId: string): string {
  return toolId.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64) || 'tool';
}
