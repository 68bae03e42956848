import type { ErrorDetail } from '@crm/http';
import type { RateInput } from './model.ts';
import type { RateValues } from './repo.ts';

/** The field error of a rate list with more than one primary rate, if any. */
export function primaryRateErrors(rates: RateInput[], prefix: string): ErrorDetail[] {
  if (rates.filter((r) => r.primary === true).length <= 1) return [];
  return [{ field: `${prefix}rates`, message: 'must have at most one primary rate' }];
}

/** The skus of rate lists as fields (`data[1].rates[0].sku`), for repeat and conflict checks. */
export function skuFields(rates: RateInput[], prefix: string): { field: string; value: string }[] {
  return rates.map((rate, i) => ({ field: `${prefix}rates[${i}].sku`, value: rate.sku }));
}

/** Rates as stored: cost defaults to 0 and the first rate is primary when none is (numeric(14,2) rounds to cents). */
export function normaliseRates(rates: RateInput[]): RateValues[] {
  const anyPrimary = rates.some((r) => r.primary === true);
  return rates.map((rate, i) => ({
    sku: rate.sku,
    cost: rate.cost ?? 0,
    price: rate.price,
    primary: anyPrimary ? rate.primary === true : i === 0,
  }));
}

/** Field errors for values repeated across batch items (e.g. two items with the same reference). */
export function repeatedAcrossItems(values: { field: string; value: string }[]): ErrorDetail[] {
  const firstField = new Map<string, string>();
  const errors: ErrorDetail[] = [];
  for (const { field, value } of values) {
    const first = firstField.get(value);
    if (first === undefined) firstField.set(value, field);
    else errors.push({ field, message: `repeats ${first}` });
  }
  return errors;
}
