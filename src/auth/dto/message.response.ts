export class MessageDto {
  /** A human-readable confirmation. */
  message!: string;
}
