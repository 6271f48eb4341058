export class WebhookAckDto {
  /** Always true: the event was verified and is (or already was) applied. */
  received!: boolean;
  /** True when this event id had been received before; nothing changed this time. */
  duplicate!: boolean;
}
