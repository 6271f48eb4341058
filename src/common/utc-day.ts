/** The UTC calendar day of an instant (as a Date at 00:00Z), the unit of the daily quota. */
export function utcDay(instant: Date): Date {
  return new Date(
    Date.UTC(
      instant.getUTCFullYear(),
      instant.getUTCMonth(),
      instant.getUTCDate(),
    ),
  );
}

/** The next UTC midnight after an instant: when the daily quota resets. */
export function nextUtcMidnight(instant: Date): Date {
  const day = utcDay(instant);
  return new Date(day.getTime() + 86_400_000);
}
