/**
 * Path matching by the route table's rules, shared by the local runner (which serves the table),
 * the `$default` function (which tells a wrong method from an unknown path) and the tests. API
 * Gateway does the same matching in the cloud: literal segments win over parameters.
 */

/** What matching reads of a route: its path, and the values a parameter is limited to. */
export interface RoutePath {
  /** API Gateway path syntax; `{name}` is a path parameter. */
  readonly path: string;
  readonly servedValues?: { readonly [parameter: string]: readonly string[] };
}

/** One spelling per path: percent-encoding normalized to upper-case hex (as the route table has it); a malformed escape stays as sent. */
export function canonicalPath(path: string): string {
  try {
    return encodeURI(decodeURI(path));
  } catch {
    return path;
  }
}

/** A route path as a matcher of canonical paths: literal segments as written, `{name}` any one segment (captured). */
export function pathPattern(path: string): { readonly pattern: RegExp; readonly params: readonly string[] } {
  const params: string[] = [];
  const source = path
    .split('/')
    .map((segment) => {
      const m = /^\{(\w+)\}$/.exec(segment);
      if (!m) return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      params.push(m[1] as string);
      return '([^/]+)';
    })
    .join('/');
  return { pattern: new RegExp(`^${source}$`), params };
}

const decoded = (segment: string): string | undefined => {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
};

/** Literal segments before parameters, segment by segment: the order API Gateway prefers routes in. */
const specificity = (path: string): number[] => path.split('/').map((segment) => (/^\{\w+\}$/.test(segment) ? 1 : 0));
const bySpecificity = (a: Pick<RoutePath, 'path'>, b: Pick<RoutePath, 'path'>): number => {
  const [x, y] = [specificity(a.path), specificity(b.path)];
  for (let i = 0; i < Math.max(x.length, y.length); i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0);
  return 0;
};

/**
 * The routes whose path takes `path` (a canonical path, canonicalPath), by any method, the most
 * specific first; a parameter with `servedValues` takes only those values.
 */
export function routesAtPath<R extends RoutePath>(routes: readonly R[], path: string): R[] {
  return routes
    .filter((route) => {
      const { pattern, params } = pathPattern(route.path);
      const m = pattern.exec(path);
      if (!m) return false;
      return params.every((name, i) => {
        const values = route.servedValues?.[name];
        const value = decoded(m[i + 1] ?? '');
        return values === undefined || (value !== undefined && values.includes(value));
      });
    })
    .sort(bySpecificity);
}
