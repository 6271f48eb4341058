import Module from 'node:module';

/**
 * The generated Prisma client imports its siblings as './x.js' while only './x.ts' exists in src/ (jest maps
 * them with moduleNameMapper; `nest build` emits the .js files). Under plain ts-node, retry such a relative
 * '.js' request as '.ts'. Imported for its side effect, before anything from src/.
 */
type ResolveFilename = (request: string, parent: unknown, isMain: boolean, options?: unknown) => string;

const moduleWithResolver = Module as unknown as { _resolveFilename: ResolveFilename };
const original = moduleWithResolver._resolveFilename;

moduleWithResolver._resolveFilename = function resolveTsForJs(request, parent, isMain, options) {
  try {
    return original.call(this, request, parent, isMain, options);
  } catch (error) {
    if (request.startsWith('.') && request.endsWith('.js')) {
      return original.call(this, `${request.slice(0, -3)}.ts`, parent, isMain, options);
    }
    throw error;
  }
};
