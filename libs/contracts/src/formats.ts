// The strict `date` and `date-time` string formats (contract §19: real calendar values), registered
// with TypeBox's FormatRegistry when this module loads, so every schema here that names them (event
// payloads, resources) checks them wherever it is used. Elysia registers loose ones of its own
// (any string `new Date()` accepts, so `2026-02-30` rolls over to March) only where none is
// registered yet; libs/http registers these again after loading Elysia, so they win either way.
import { FormatRegistry } from '@sinclair/typebox';

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Whether year-month-day exists in the proleptic Gregorian calendar, 0001-01-01..9999-12-31. */
export function isCalendarDate(year: number, month: number, day: number): boolean {
  if (year < 1 || year > 9999 || month < 1 || month > 12 || day < 1) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return day <= (month === 2 && leap ? 29 : (DAYS_IN_MONTH[month - 1] as number));
}

// Read character by character rather than with a regular expression: the response schemas check
// every instant of every answer (two per contact, thirty on a page of contacts).

/** The number written by `count` ASCII digits at `start`, or -1. */
function digitsAt(value: string, start: number, count: number): number {
  let n = 0;
  for (let i = start; i < start + count; i++) {
    const c = value.charCodeAt(i) - 48;
    if (!(c >= 0 && c <= 9)) return -1;
    n = n * 10 + c;
  }
  return n;
}

/** Whether `value` holds a calendar-valid `YYYY-MM-DD` at its start. */
function dateAt(value: string): boolean {
  if (value.charCodeAt(4) !== 45 || value.charCodeAt(7) !== 45) return false;
  return isCalendarDate(digitsAt(value, 0, 4), digitsAt(value, 5, 2), digitsAt(value, 8, 2));
}

/** `YYYY-MM-DD` that exists in the calendar (contract §19). */
export function isDate(value: string): boolean {
  return value.length === 10 && dateAt(value);
}

/** An RFC 3339 instant: calendar-valid date, 00:00:00..23:59:59, and `Z` or a `±hh:mm` offset. */
export function isDateTime(value: string): boolean {
  const length = value.length;
  if (length < 20 || !dateAt(value)) return false;
  const t = value.charCodeAt(10);
  if ((t !== 84 && t !== 116) || value.charCodeAt(13) !== 58 || value.charCodeAt(16) !== 58) return false;
  const hour = digitsAt(value, 11, 2);
  const minute = digitsAt(value, 14, 2);
  const second = digitsAt(value, 17, 2);
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) return false;
  let i = 19;
  if (value.charCodeAt(i) === 46) {
    let end = i + 1;
    while (end < length && end - i <= 9 && digitsAt(value, end, 1) >= 0) end++;
    if (end === i + 1) return false;
    i = end;
  }
  const zone = value.charCodeAt(i);
  if (zone === 90 || zone === 122) return i + 1 === length;
  if ((zone !== 43 && zone !== 45) || i + 6 !== length || value.charCodeAt(i + 3) !== 58) return false;
  const offsetHour = digitsAt(value, i + 1, 2);
  const offsetMinute = digitsAt(value, i + 4, 2);
  return offsetHour >= 0 && offsetHour <= 23 && offsetMinute >= 0 && offsetMinute <= 59;
}

/** Registers the strict formats with TypeBox (again: after a library that registered its own). */
export function registerStrictFormats(): void {
  FormatRegistry.Set('date', isDate);
  FormatRegistry.Set('date-time', isDateTime);
}

registerStrictFormats();
