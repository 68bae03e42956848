type Json = Record<string, any>;

/** `per_page` → `PerPage`, `updated_since` → `UpdatedSince`. */
const componentName = (name: string) =>
  name
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('');

/**
 * A query parameter that several operations declare identically (every list's `per_page`, `page`,
 * `sort`, `cursor`…) is described once under `components.parameters` and referred to. When
 * operations declare a name differently (the events feed's own `updated_since`), the variant
 * most of them share gets the component; the others stay inline.
 */
export function hoistSharedParameters(pathItems: Json[], parameters: Json): void {
  const operations = pathItems.flatMap((item) => Object.values<Json>(item));
  const uses = new Map<string, number>();
  for (const operation of operations) {
    for (const parameter of operation.parameters ?? []) {
      // Path parameters stay with their path (an `{id}` means a different resource in each).
      if (parameter.$ref || parameter.in !== 'query') continue;
      const key = JSON.stringify(parameter);
      uses.set(key, (uses.get(key) ?? 0) + 1);
    }
  }
  const refs = new Map<string, Json>();
  for (const [key, count] of [...uses].sort((a, b) => b[1] - a[1])) {
    if (count < 2) break;
    const parameter = JSON.parse(key) as Json;
    const name = componentName(parameter.name);
    if (!name || parameters[name]) continue;
    parameters[name] = parameter;
    refs.set(key, { $ref: `#/components/parameters/${name}` });
  }
  for (const operation of operations) {
    if (!operation.parameters) continue;
    operation.parameters = operation.parameters.map((p: Json) => refs.get(JSON.stringify(p)) ?? p);
  }
}
