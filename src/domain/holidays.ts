/**
 * Public holidays for a TimeWindow's `Holidays` field ("NL", "US-NY", "DE-BY"): an ISO 3166 country code, optionally
 * with a region, looked up in the date-holidays package (kept by its maintainers, so no table is kept by hand here).
 * Only holidays of type `public` count (not bank, school or observance days). A holiday is a calendar date; the
 * window that names the code is open all day on it in its own zone (time-window.ts). isOpen runs in every dispatch
 * pass, so each code's holidays of a year are computed once and kept as local day numbers.
 */
import Holidays from 'date-holidays';
import { civilFromDays, daysFromCivil, MS_PER_DAY } from '../time/civil.ts';
import { itemAt } from './item-at.ts';

const CODE = /^([A-Z]{2})(?:-([A-Z0-9]{1,6}))?$/;

/** Why `code` is not a holiday code this server knows, or undefined when it is one. */
export function holidayCodeProblem(code: string): string | undefined {
  const m = CODE.exec(code);
  if (!m) return `"${code}" is not a country code with an optional region, such as NL, US-NY or DE-BY`;
  const lookup = new Holidays();
  const country = itemAt(m, 1);
  if (!lookup.getCountries()[country]) return `there are no public holidays for country "${country}"`;
  const region = m[2];
  if (region !== undefined && !lookup.getStates(country)?.[region])
    return `there are no public holidays for region "${region}" of country "${country}"`;
  return undefined;
}

// code → year → the local day numbers of that year's public holidays. A code is validated on save, so the map holds
// at most the codes in use; years are few per code (the ones windows are asked about).
const byCode = new Map<string, Map<number, ReadonlySet<number>>>();
const MAX_YEARS_PER_CODE = 64;
const civil = { year: 0, month: 0, day: 0 };

/** Whether the calendar day `day` (days since 1970-01-01) is a public holiday of `code`. */
export function isHoliday(code: string, day: number): boolean {
  civilFromDays(day, civil);
  const year = civil.year;
  // A holiday listed under the year before can last into this one (a span over New Year).
  return holidaysOf(code, year).has(day) || holidaysOf(code, year - 1).has(day);
}

function holidaysOf(code: string, year: number): ReadonlySet<number> {
  let years = byCode.get(code);
  if (!years) {
    years = new Map();
    byCode.set(code, years);
  }
  const hit = years.get(year);
  if (hit) return hit;
  const days = new Set<number>();
  const m = CODE.exec(code);
  // Unknown codes are refused on save; one stored before (or a region the package dropped) simply has no holidays.
  if (m && !holidayCodeProblem(code)) {
    const calendar = m[2] === undefined ? new Holidays(itemAt(m, 1)) : new Holidays(itemAt(m, 1), m[2]);
    for (const h of calendar.getHolidays(year)) {
      if (h.type !== 'public') continue;
      const ymd = h.date.slice(0, 10).split('-').map(Number);
      const first = daysFromCivil(itemAt(ymd, 0), itemAt(ymd, 1), itemAt(ymd, 2));
      // Most last one day; a few several (their end is given as an instant, 23 to 25 hours a day around DST).
      const length = Math.max(1, Math.round((h.end.getTime() - h.start.getTime()) / MS_PER_DAY));
      for (let i = 0; i < length; i++) days.add(first + i);
    }
  }
  if (years.size >= MAX_YEARS_PER_CODE) years.clear();
  years.set(year, days);
  return days;
}
