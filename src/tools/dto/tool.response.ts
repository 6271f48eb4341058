import { ApiProperty } from '@nestjs/swagger';

export class ToolDto {
  /** `files.search` for a built-in, `mcp.<server>.<tool>` for a tool of an MCP server. */
  @ApiProperty({ example: 'files.search' })
  id!: string;

  title!: string;

  /** What the tool does, as the model reads it. */
  description!: string;

  /** The arguments the tool takes: a JSON Schema object. */
  @ApiProperty({ type: 'object', additionalProperties: true })
  inputSchema!: Record<string, unknown>;

  /** `builtin`, or the name of the MCP server. */
  @ApiProperty({ example: 'builtin' })
  source!: string;

  /** `confirm`: a run waits for its owner to approve each call of this tool. */
  @ApiProperty({ enum: ['auto', 'confirm'] })
  approval!: 'auto' | 'confirm';

  /** Credits charged per call that runs, on top of the model's price. */
  price!: number;
}

export class ToolListDto {
  data!: ToolDto[];
}
