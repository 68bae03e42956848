// Stage: the input boundary (contract §19) for every route — strict JSON bodies, and no NUL in
// any query or path value.
import { Elysia } from 'elysia';
import { nulErrors, readJsonBody } from '../input/json-body.ts';
import { throwIfInvalid } from '../input/validate.ts';
import type { DescribedRoute } from '../openapi.ts';

/** Whether any name or string value of a flat map (query, path parameters) holds a NUL; allocates nothing. */
function holdsNul(values: Record<string, unknown> | undefined): boolean {
  if (!values) return false;
  for (const name in values) {
    if (name.includes('\u0000')) return true;
    const value = values[name];
    if (typeof value === 'string') {
      if (value.includes('\u0000')) return true;
    } else if (Array.isArray(value) && value.some((v) => typeof v === 'string' && v.includes('\u0000'))) return true;
  }
  return false;
}

/** Whether a route reads its own body stream (`parse: 'none'`, the multipart uploads). */
export function readsRawBody(route: DescribedRoute): boolean {
  const parse = route.hooks?.parse;
  const hooks = Array.isArray(parse) ? parse : [parse];
  return hooks.some((hook) => hook === 'none' || hook?.fn === 'none');
}

/** The boundary plugin; `rawBodyRoutes` (`METHOD /path`) are left to read their own stream. */
export function inputBoundary(service: string, rawBodyRoutes: ReadonlySet<string>) {
  return (
    new Elysia({ name: `crm-input-boundary-${service}` })
      .onParse({ as: 'global' }, ({ request, contentType, route }) =>
        rawBodyRoutes.has(`${request.method} ${route}`) ? null : readJsonBody(request, contentType),
      )
      // After the route's own checks (which name every failing query field at once), catch the rest.
      .onBeforeHandle({ as: 'global' }, ({ query, params }) => {
        if (holdsNul(query) || holdsNul(params)) throwIfInvalid([...nulErrors(query), ...nulErrors(params)]);
      })
  );
}
