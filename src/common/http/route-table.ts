import { Application } from 'express';

interface RouterLayer {
  route?: { methods: Record<string, boolean> };
  match(path: string): boolean;
}

/**
 * The HTTP methods registered for a path, read from Express' router. Used to answer 405 with an
 * `Allow` header instead of 404 when the path exists under another method.
 */
export function allowedMethodsFor(app: Application, path: string): string[] {
  const stack =
    (app as unknown as { router?: { stack: RouterLayer[] } }).router?.stack ??
    [];
  const methods = new Set<string>();
  for (const layer of stack) {
    if (!layer.route || !layer.match(path)) continue;
    for (const [method, enabled] of Object.entries(layer.route.methods)) {
      if (enabled && method !== '_all') methods.add(method.toUpperCase());
    }
  }
  if (methods.has('GET')) methods.add('HEAD');
  return [...methods].sort();
}
