// Stage: the input boundary (contract §19) for every route — strict JSON bodies, and no NUL in
// any query or path value.
import { Elysia } from 'elysia';
import { nulErrors, readJsonBody } from '../input/json-body.ts';
import { throwIfInvalid } from '../input/validate.ts';
import type { DescribedRoute } from '../openapi.ts';

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
      .onBeforeHandle({ as: 'global' }, ({ query, params }) => throwIfInvalid([...nulErrors(query), ...nulErrors(params)]))
  );
}
