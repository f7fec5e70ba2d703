import { z } from 'zod';

/**
 * A whole-number setting of at least `min`, `byDefault` when the config leaves it out: the shape
 * most of the config's counts, sizes and durations (…Ms) share.
 */
export function wholeNumber(min: number, byDefault: number) {
  return z.number().int().min(min).default(byDefault);
}
