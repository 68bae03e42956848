// The strict `date` and `date-time` string formats (contract §19: real calendar values), registered
// with TypeBox's FormatRegistry when this module loads, so every schema here that names them (event
// payloads, resources) checks them wherever it is used. Elysia registers loose ones of its own
// (any string `new Date()` accepts, so `2026-02-30` rolls over to March) only where none is
// registered yet; libs/http registers these again after loading Elysia, so they win either way.
import { FormatRegistry } from '@sinclair/typebox';

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d{1,9})?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Whether year-month-day exists in the proleptic Gregorian calendar, 0001-01-01..9999-12-31. */
export function isCalendarDate(year: number, month: number, day: number): boolean {
  if (year < 1 || year > 9999 || month < 1 || month > 12 || day < 1) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return day <= (month === 2 && leap ? 29 : (DAYS_IN_MONTH[month - 1] as number));
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

/** Registers the strict formats with TypeBox (again: after a library that registered its own). */
export function registerStrictFormats(): void {
  FormatRegistry.Set('date', isDate);
  FormatRegistry.Set('date-time', isDateTime);
}

registerStrictFormats();
