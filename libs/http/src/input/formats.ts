// Elysia registers loose `date`/`date-time` formats (any string `new Date()` accepts, so
// `2026-02-30` rolls over to March); contract §19 wants real calendar values, so ours replace them.
import 'elysia';
import { FormatRegistry } from '@sinclair/typebox';

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d{1,9})?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;

/** Whether year-month-day exists in the proleptic Gregorian calendar, 0001-01-01..9999-12-31. */
export function isCalendarDate(year: number, month: number, day: number): boolean {
  if (year < 1 || year > 9999 || month < 1 || month > 12 || day < 1) return false;
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/** `YYYY-MM-DD` that exists in the calendar (contract §19). */
export function isDate(value: string): boolean {
  const m = DATE.exec(value);
  return !!m && isCalendarDate(Number(m[1]), Number(m[2]), Number(m[3]));
}

/** An RFC 3339 instant: calendar-valid date, 00:00:00..23:59:59, and `Z` or a `±hh:mm` offset. */
export function isDateTime(value: string): boolean {
  const m = DATE_TIME.exec(value);
  if (!m || !isCalendarDate(Number(m[1]), Number(m[2]), Number(m[3]))) return false;
  if (Number(m[4]) > 23 || Number(m[5]) > 59 || Number(m[6]) > 59) return false;
  return m[7] === undefined || (Number(m[8]) <= 23 && Number(m[9]) <= 59);
}

FormatRegistry.Set('date', isDate);
FormatRegistry.Set('date-time', isDateTime);
