// Stage: a known path with the wrong method is 405 with `Allow` (contract §3), not 404.
import { AppError } from '../errors.ts';
import type { DescribedRoute } from '../openapi.ts';

/** Returns the 405 error for an unmatched request whose path another method serves, else undefined. */
export function methodNotAllowed(routes: DescribedRoute[]) {
  const matchers = routes.map((r) => ({
    method: r.method,
    regex: new RegExp(
      `^${r.path
        .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
        .replace(/:[^/]+/g, '[^/]+')
        .replace(/\*/g, '.*')}$`,
    ),
  }));
  return (method: string, path: string): AppError | undefined => {
    const allowed = matchers.filter((m) => m.method !== method && m.regex.test(path)).map((m) => m.method);
    if (allowed.length === 0 || allowed.includes('ALL')) return undefined;
    return new AppError('method_not_allowed', `${method} is not allowed on ${path}`, undefined, {
      allow: [...new Set(allowed)].join(', '),
    });
  };
}
