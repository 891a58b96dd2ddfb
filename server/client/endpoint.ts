/** `http://host:3000` → `http://host:3000/graphql`; a URL already ending in `/graphql` is kept. */
export function graphqlEndpoint(url: string): string {
  const base = url.trim().replace(/\/+$/, '');
  return base.endsWith('/graphql') ? base : `${base}/graphql`;
}
