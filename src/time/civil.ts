/**
 * Proleptic Gregorian calendar arithmetic on whole days since 1970-01-01 (Howard Hinnant's
 * days_from_civil / civil_from_days). Pure integer maths: formatting the hot-path timestamps needs
 * neither Date nor Intl nor Temporal.
 */

export const MS_PER_DAY = 86_400_000;

/** Days since 1970-01-01 of a calendar date; month 1-12. Works for any year, including < 100. */
export function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

/** Calendar date of a day count; `out` is reused by the caller to avoid an allocation per call. */
export function civilFromDays(days: number, out: { year: number; month: number; day: number }): void {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const month = mp < 10 ? mp + 3 : mp - 9;
  out.day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  out.month = month;
  out.year = yoe + era * 400 + (month <= 2 ? 1 : 0);
}
